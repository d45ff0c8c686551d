"""“I can't judge this” and per-item comments (SPEC.md, "Measurement validity"): a pass
is stored as ``cant_judge``, never counted, and its slot goes to someone else, so every
item still ends with exactly N; a comment is kept with its label and exported; neither is
accepted where the batch does not offer it. Through the worker API."""

import json

import pytest
from django.test import Client

from annotation.models import Item, Label
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from core.errors import InvalidInput
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db


def worker(batch, name):
    client = Client()
    client.get(f"/work/{batch.slug}/", {"worker": name})
    return client


def post(client, url, body=None):
    return client.post(
        url,
        json.dumps(body or {}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )


@pytest.mark.parametrize("kind", ["absolute", "pairwise"])
def test_a_pass_is_never_counted_and_its_slot_goes_to_someone_else(kind):
    batch = make_batch(kind=kind, n_items=1, per_item=2, allow_cant_judge=True)
    passer = worker(batch, "passer")
    lease = post(passer, f"/api/v1/work/{batch.slug}/next").json()
    answer = post(passer, f"/api/v1/assignments/{lease['assignment']}/label", {"cant_judge": True})
    assert answer.status_code == 201 and answer.json() == {"status": "cant_judge"}
    item = Item.objects.get(batch=batch)
    assert (item.reserved_count, item.counted_count) == (0, 0)  # the slot went back
    # the same pass again is a harmless retry; a value afterwards is a conflict
    again = post(passer, f"/api/v1/assignments/{lease['assignment']}/label", {"cant_judge": True})
    assert again.status_code == 200
    changed = post(passer, f"/api/v1/assignments/{lease['assignment']}/label", {"value": 1})
    assert changed.status_code == 409 and "can't judge" in changed.json()["detail"]
    # the passer never gets the item again; two others fill it to exactly N
    assert post(passer, f"/api/v1/work/{batch.slug}/next").json()["assignment"] is None
    for name in ("a", "b"):
        other = worker(batch, name)
        got = post(other, f"/api/v1/work/{batch.slug}/next").json()
        post(other, f"/api/v1/assignments/{got['assignment']}/label", {"value": 1})
    item.refresh_from_db()
    assert item.counted_count == 2
    assert Label.objects.filter(batch=batch, status="cant_judge").count() == 1


def test_a_batch_without_the_choice_refuses_a_pass_and_a_comment():
    batch = make_batch(n_items=1, per_item=1)
    client = worker(batch, "w")
    lease = post(client, f"/api/v1/work/{batch.slug}/next").json()
    url = f"/api/v1/assignments/{lease['assignment']}/label"
    refused = post(client, url, {"cant_judge": True})
    assert refused.status_code == 400 and "cant_judge" in refused.json()["detail"]
    refused = post(client, url, {"value": 3, "comment": "why"})
    assert refused.status_code == 400 and "comment" in refused.json()["detail"]
    assert not Label.objects.exists()


def test_a_comment_is_kept_escaped_and_exported(tmp_path):
    batch = make_batch(n_items=2, per_item=1, comment_box="optional", allow_cant_judge=True)
    client = worker(batch, "commenter")
    note = '=HYPERLINK("http://x") <b>too long to judge</b>'
    lease = post(client, f"/api/v1/work/{batch.slug}/next").json()
    post(client, f"/api/v1/assignments/{lease['assignment']}/label", {"value": 4, "comment": note})
    lease = post(client, f"/api/v1/work/{batch.slug}/next").json()
    post(
        client,
        f"/api/v1/assignments/{lease['assignment']}/label",
        {"cant_judge": True, "comment": "I do not read code"},
    )
    comments = dict(Label.objects.values_list("status", "comment"))
    assert comments == {"counted": note, "cant_judge": "I do not read code"}
    from django.core.management import call_command

    out = tmp_path / "all.csv"
    call_command("export_labels", batch.slug, "--format", "csv", "--all-statuses", "-o", str(out))
    text = out.read_text()
    assert "'=HYPERLINK" in text and "cant_judge" in text  # a formula never starts a cell


def test_a_comment_is_bounded_and_has_no_control_characters():
    batch = make_batch(n_items=1, per_item=1, comment_box="optional")
    person = make_participant(batch, "long")
    lease = lease_next_item(batch, person).assignment
    with pytest.raises(InvalidInput) as refused:
        submit_label(person.annotator, lease.pk, 3, 1000, comment="x" * 2001)
    assert refused.value.field == "comment"
    with pytest.raises(InvalidInput):
        submit_label(person.annotator, lease.pk, 3, 1000, comment="a\x00b")
    assert submit_label(person.annotator, lease.pk, 3, 1000, comment="fine").status == "counted"
