"""Entry integrity (SPEC.md, "Measurement validity" and "Integrity"): an invitation-only
batch admits invitations only, unless it names a platform (and then a Prolific link
must carry the batch's study id); the shared-address flag fires on every database, with
missing addresses left out; a browser whose participation was taken over by another
one stops working. Through real HTTP requests against the real database."""

import pytest
from django.test import Client

from annotation.models import Assignment, Item, Label, Participation
from annotation.selectors import sharing_groups
from annotation.services.batches import update_batch
from annotation.services.invitations import new_invitations
from core.errors import InvalidInput
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db

PROLIFIC = {"PROLIFIC_PID": "madeup", "STUDY_ID": "s", "SESSION_ID": "x"}
MTURK = {"workerId": "madeup", "assignmentId": "A1", "hitId": "h"}


def next_item(client, batch):
    return client.post(
        f"/api/v1/work/{batch.slug}/next", HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value
    )


def label(client, assignment, value):
    """Post ``value`` as the label of ``assignment`` from the browser session ``client``."""
    return client.post(
        f"/api/v1/assignments/{assignment}/label",
        {"value": value},
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )


@pytest.mark.parametrize("params", [PROLIFIC, MTURK, {"worker": "madeup"}])
def test_an_invitation_only_batch_refuses_every_other_link(params):
    batch = make_batch(n_items=2, invitations_required=True)
    client = Client()
    page = client.get(f"/work/{batch.slug}/", params)
    assert page.status_code == 400
    assert "personal invitation only" in page.content.decode()
    assert not Participation.objects.filter(batch=batch).exists()
    refused = next_item(client, batch) if "csrftoken" in client.cookies else None
    assert refused is None or refused.status_code in (403, 404)
    assert not Assignment.objects.filter(batch=batch).exists()


def test_an_invitation_link_still_enters_an_invitation_only_batch():
    batch = make_batch(n_items=2, invitations_required=True)
    _, token = new_invitations(batch, 1)[0]
    page = Client().get(f"/work/{batch.slug}/", {"invite": token})
    assert page.status_code == 200
    assert Participation.objects.filter(batch=batch).count() == 1


def test_a_batch_that_accepts_prolific_checks_the_study_id():
    batch = make_batch(
        n_items=2,
        invitations_required=True,
        accept_platforms=["prolific"],
        prolific_study_id="STUDY123",
    )
    wrong = Client().get(f"/work/{batch.slug}/", PROLIFIC)
    assert wrong.status_code == 400 and "another Prolific study" in wrong.content.decode()
    missing = Client().get(f"/work/{batch.slug}/", {"PROLIFIC_PID": "p"})
    assert missing.status_code == 400
    assert Client().get(f"/work/{batch.slug}/", MTURK).status_code == 400  # not accepted
    right = Client().get(f"/work/{batch.slug}/", {**PROLIFIC, "STUDY_ID": "STUDY123"})
    assert right.status_code == 200
    assert Participation.objects.filter(batch=batch).count() == 1


def test_accepting_prolific_needs_the_study_id():
    batch = make_batch(n_items=1, invitations_required=True)
    with pytest.raises(InvalidInput) as refused:
        update_batch(batch, {"accept_platforms": ["prolific"]})
    assert refused.value.field == "prolific_study_id"
    with pytest.raises(InvalidInput) as unknown:
        update_batch(batch, {"accept_platforms": ["facebook"]})
    assert unknown.value.field == "accept_platforms"


def test_a_link_of_another_prolific_study_is_refused_where_the_batch_names_its_study():
    batch = make_batch(n_items=1, prolific_study_id="STUDY123")
    assert Client().get(f"/work/{batch.slug}/", PROLIFIC).status_code == 400
    assert Client().get(f"/work/{batch.slug}/", {"PROLIFIC_PID": "p2"}).status_code == 200


def test_ids_from_one_address_are_grouped_on_every_database_without_the_missing_ones():
    batch = make_batch(n_items=4, per_item=4)
    for name in ("s1", "s2", "s3"):  # one address, a fresh browser (device) each
        Client(REMOTE_ADDR="127.0.0.1").get(f"/work/{batch.slug}/", {"worker": name})
    Client(REMOTE_ADDR="127.0.0.2").get(f"/work/{batch.slug}/", {"worker": "honest"})
    for name in ("n1", "n2"):  # entered with no known address
        make_participant(batch, name)
    groups = sharing_groups(batch)
    sybils = set(
        Participation.objects.filter(annotator__platform_id__in=["s1", "s2", "s3"]).values_list(
            "annotator__pseudonym", flat=True
        )
    )
    address_groups = [set(names) for group, names in groups.items() if group.startswith("address")]
    assert address_groups == [sybils]


def test_a_browser_that_was_taken_over_stops_and_its_late_answer_never_counts():
    batch = make_batch(n_items=3, per_item=1)
    first = Client()
    first.get(f"/work/{batch.slug}/", {"worker": "bound"})
    held = next_item(first, batch).json()
    second = Client()
    assert second.get(f"/work/{batch.slug}/", {"worker": "bound"}).status_code == 409
    second.post(f"/work/{batch.slug}/switch")
    taken = next_item(second, batch).json()
    assert taken["assignment"] != held["assignment"]
    # the first browser: no more work, and its answer to the released lease is kept only
    refused = next_item(first, batch)
    assert refused.status_code == 409 and "another browser" in refused.json()["detail"]
    late = label(first, held["assignment"], 4)
    assert late.status_code == 201 and late.json()["status"] == "surplus"
    assert Item.objects.get(item_id=held["item"]["item_id"], batch=batch).counted_count == 0
    # nor can it answer the second browser's lease
    stolen = label(first, taken["assignment"], 4)
    assert stolen.status_code == 409 and stolen.json()["code"] == "taken_over"
    # the second browser goes on, and its answer counts
    answer = label(second, taken["assignment"], 3)
    assert answer.status_code == 201 and answer.json()["status"] == "counted"
    assert Label.objects.filter(batch=batch, status="counted").count() == 1


@pytest.mark.parametrize(
    ("design", "said", "not_said"),
    [
        ({}, "unless you name their platform", "are unaffected"),
        ({"invitations_required": True}, "and Prolific and MTurk links are refused", "unaffected"),
        (
            {"invitations_required": True, "accept_platforms": ["mturk"]},
            "only</strong> such links and MTurk links: plain",
            "Prolific and MTurk links are refused",
        ),
    ],
)
def test_the_invitations_page_says_which_links_the_batch_refuses(design, said, not_said):
    from tests.staff import staff_client

    batch = make_batch(n_items=1, live=False, **design)
    page = staff_client("admin").get(f"/manage/{batch.slug}/invitations").content.decode()
    assert said in page and not_said not in page
