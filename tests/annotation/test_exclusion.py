"""Excluding an annotator mid-study: labels kept as excluded, slots reopened, still N."""

import pytest

from annotation.models import Item, Label, Participation
from annotation.services.annotators import exclude_annotator, include_annotator
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.factories import make_batch, make_participant, rate_until_drained

pytestmark = pytest.mark.django_db


def test_exclusion_mid_study_still_ends_at_exactly_n():
    batch = make_batch(n_items=4, per_item=2)
    bad = make_participant(batch)
    held = None
    for _ in range(3):  # two labels and one open lease
        outcome = lease_next_item(batch, bad)
        if held is None and _ == 2:
            held = outcome
            break
        submit_label(bad.annotator, outcome.assignment.pk, 1, 100)
    affected = exclude_annotator(batch, bad.annotator)
    assert affected == 2
    assert Label.objects.filter(annotator=bad.annotator, status="excluded").count() == 2
    # the excluded annotator gets no more work, and a late label of theirs is excluded too
    assert lease_next_item(batch, bad).reason == "excluded"
    assert submit_label(bad.annotator, held.assignment.pk, 1, 100).status == "excluded"
    rate_until_drained(batch, [make_participant(batch) for _ in range(3)])
    for item in Item.objects.filter(batch=batch):
        assert item.counted_count == 2
        assert Label.objects.filter(item=item, status="counted").count() == 2
    assert Label.objects.filter(annotator=bad.annotator).count() == 3
    assert not Label.objects.filter(annotator=bad.annotator, status="counted").exists()


def test_undo_exclusion_counts_where_room_is_left_and_surplus_elsewhere():
    batch = make_batch(n_items=2, per_item=1)
    person = make_participant(batch)
    rate_until_drained(batch, [person])
    exclude_annotator(batch, person.annotator)
    other = make_participant(batch)
    outcome = lease_next_item(batch, other)  # refills one of the two reopened slots
    submit_label(other.annotator, outcome.assignment.pk, 5, 100)
    result = include_annotator(batch, person.annotator)
    assert result == {"counted": 1, "surplus": 1}
    assert Participation.objects.get(pk=person.pk).status == "active"
    assert list(Item.objects.filter(batch=batch).values_list("counted_count", flat=True)) == [1, 1]


def test_the_api_keeps_the_reason_and_records_an_exclusion_once():
    from annotation.models import Participation
    from core.models import AuditEvent
    from tests.staff import token_client

    batch = make_batch(n_items=2, per_item=1)
    person = make_participant(batch, "noisy")
    rate_until_drained(batch, [person])
    client = token_client("admin")
    url = f"/api/v1/batches/{batch.slug}/annotators/{person.annotator.pseudonym}"

    def post(action, body=None, **kwargs):
        data = body if body is not None else {}
        return client.post(f"{url}/{action}", data, content_type="application/json", **kwargs)

    for body, field in [({"reasn": "typo"}, "reasn"), ({"reason": 5}, "reason"),
                        ({"reason": "x" * 501}, "reason"), ({"reason": "a\x00b"}, "reason"),
                        (["reason"], "body")]:  # fmt: skip
        refused = post("exclude", body)
        assert (refused.status_code, refused.json()["field"]) == (400, field), body
    assert client.post(f"{url}/exclude", "x", content_type="text/plain").status_code == 415
    assert Participation.objects.get(pk=person.pk).status == "active"  # nothing happened

    first = post("exclude", {"reason": "answered without reading"})
    assert first.json() == {
        "annotator": person.annotator.pseudonym, "status": "excluded", "labels_excluded": 2
    }  # fmt: skip
    again = post("exclude", {"reason": "still"})
    assert again.status_code == 200 and again.json()["labels_excluded"] == 0
    events = AuditEvent.objects.filter(action="annotator.exclude")
    assert list(events.values_list("reason", flat=True)) == ["answered without reading"]
    assert post("include").status_code == 200 and post("include").status_code == 200
    assert AuditEvent.objects.filter(action="annotator.include").count() == 1
    assert Label.objects.filter(batch=batch, status="counted").count() == 2
