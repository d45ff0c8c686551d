"""Every Prolific status that means "this participant left" releases their open leases
at once (SPEC.md, "Crowd platforms", Sync): ``RETURNED``, ``TIMED-OUT`` and ``REJECTED``,
whether the status comes by the webhook or by a sync, for a single lease and for every
open lease of a bundle. Their counted labels stay counted, the status is kept on the
participation, and a label they send after the release is stored — but never counted a
second time: every item still ends with exactly N counted labels (guarantees 1 and 3).

Against the real database and the fake Prolific (``tests/crowd/fake_prolific.py``)."""

import json
import time
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Assignment, Item, Label
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from crowd.services.webhooks import signature
from tests.annotation.bundled import bundled_batch
from tests.crowd.conftest import WEBHOOK_SECRET
from tests.crowd.helpers import STUDY, label_items, prolific_batch, prolific_participant
from tests.factories import make_participant, rate_until_drained

pytestmark = pytest.mark.django_db

DEPARTED = ["RETURNED", "TIMED-OUT", "REJECTED"]
SOURCES = ["webhook", "sync"]


def announce(client, prolific, batch, submission_id, pid, status, source):
    """Prolific tells the batch that the submission's status is now ``status``."""
    prolific.set_status(submission_id, status)
    if source == "sync":
        call_command("prolific", "sync", batch.slug, stdout=StringIO())
        return
    body = json.dumps(
        {
            "resource_id": submission_id,
            "event_type": "submission.status.change",
            "participant_id": pid,
            "status": status,
        }
    ).encode()
    timestamp = str(int(time.time()))
    answer = client.post(
        "/hooks/prolific/",
        data=body,
        content_type="application/json",
        headers={
            "X-Prolific-Request-Signature": signature(WEBHOOK_SECRET, timestamp, body),
            "X-Prolific-Request-Timestamp": timestamp,
            "X-Event-ID": f"evt-{pid}-{status}",
        },
    )
    assert answer.status_code == 200 and answer.json()["outcome"] == "applied", answer.content


def assert_exactly_n_and_counters(batch, n):
    for item in Item.objects.filter(batch=batch, is_check=False):
        counted = Label.objects.filter(item=item, status="counted").count()
        held = Assignment.objects.filter(item=item, state="open", purpose="regular").count()
        assert (item.counted_count, counted) == (n, n), item.item_id
        assert item.reserved_count == counted + held, item.item_id


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("status", DEPARTED)
def test_a_departure_releases_the_open_lease_and_a_later_label_is_surplus(
    client, prolific, status, source
):
    batch = prolific_batch(prolific, n_items=3, per_item=1)
    person, submission = prolific_participant(batch, prolific, "leaver")
    assert label_items(batch, person, 1) == 1
    held = lease_next_item(batch, person).assignment
    item = Item.objects.get(pk=held.item_id)
    assert item.reserved_count == 1

    announce(client, prolific, batch, submission, "leaver", status, source)

    assert Assignment.objects.get(pk=held.pk).state == "expired"
    item.refresh_from_db()
    assert (item.reserved_count, item.counted_count) == (0, 0)  # free for others at once
    person.refresh_from_db()
    assert person.platform_status == status
    assert Label.objects.filter(annotator=person.annotator, status="counted").count() == 1

    others = [make_participant(batch, f"other-{number}") for number in range(2)]
    rate_until_drained(batch, others)
    assert Label.objects.get(item=item).annotator_id != person.annotator_id
    # the leaver's page was still open: the answer is kept, never a second count
    late = submit_label(person.annotator, held.pk, 5, 2000)
    assert late.status == "surplus"
    assert Label.objects.filter(annotator=person.annotator).count() == 2
    assert_exactly_n_and_counters(batch, 1)


@pytest.mark.parametrize("source", SOURCES)
@pytest.mark.parametrize("status", DEPARTED)
def test_a_departure_mid_bundle_releases_every_open_lease_of_the_bundle(
    client, prolific, status, source
):
    batch = bundled_batch(
        f"depart-{status.lower()}-{source}",
        n_queries=2,
        per_query=4,
        per_item=1,
        prolific_study_id=STUDY,
    )
    prolific.add_study(STUDY)
    person, submission = prolific_participant(batch, prolific, "leaver")
    first = lease_next_item(batch, person).assignment
    bundle = Item.objects.get(pk=first.item_id).bundle
    submit_label(person.annotator, first.pk, 4, 2000)
    released = list(Assignment.objects.filter(annotator=person.annotator, state="open"))
    assert len(released) == 3  # the rest of the bundle

    announce(client, prolific, batch, submission, "leaver", status, source)

    assert not Assignment.objects.filter(annotator=person.annotator, state="open").exists()
    for item in Item.objects.filter(batch=batch, bundle=bundle):
        held_by_leaver = item.pk == first.item_id
        assert (item.reserved_count, item.counted_count) == (int(held_by_leaver),) * 2
    assert Label.objects.get(annotator=person.annotator).status == "counted"
    person.refresh_from_db()
    assert person.platform_status == status

    # before anyone else takes the slot, one late answer arrives: it may count (the item
    # has room) but only once; the one sent after the refill is surplus
    early = submit_label(person.annotator, released[0].pk, 2, 2000)
    assert early.status in ("counted", "surplus")
    newcomer = make_participant(batch, "newcomer")
    lease = lease_next_item(batch, newcomer).assignment
    assert Item.objects.get(pk=lease.item_id).bundle == bundle  # the rest, as a partial set
    rate_until_drained(batch, [newcomer, *[make_participant(batch, f"w{n}") for n in range(3)]])
    late = submit_label(person.annotator, released[1].pk, 2, 2000)
    assert late.status == "surplus"
    assert Label.objects.filter(annotator=person.annotator).count() == 3
    assert_exactly_n_and_counters(batch, 1)
    # the newcomer was given only what the leaver left: no item twice in the bundle
    leaver_items = set(
        Label.objects.filter(annotator=person.annotator, status="counted").values_list(
            "item_id", flat=True
        )
    )
    newcomer_items = set(
        Label.objects.filter(annotator=newcomer.annotator).values_list("item_id", flat=True)
    )
    assert not leaver_items & newcomer_items


@pytest.mark.parametrize("status", ["ACTIVE", "AWAITING REVIEW", "APPROVED"])
def test_a_status_that_is_not_a_departure_keeps_the_lease(client, prolific, status):
    """The opposite case, so that a release of every lease on any status fails here."""
    batch = prolific_batch(prolific, n_items=2, per_item=1)
    person, submission = prolific_participant(batch, prolific, "stays")
    held = lease_next_item(batch, person).assignment
    announce(client, prolific, batch, submission, "stays", status, "webhook")
    assert Assignment.objects.get(pk=held.pk).state == "open"
    assert Item.objects.get(pk=held.item_id).reserved_count == 1
    assert submit_label(person.annotator, held.pk, 3, 2000).status == "counted"
