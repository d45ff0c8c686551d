"""Leasing and labelling services: order, quota, expiry, surplus, retries, errors."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment, Item, Label, LabelStatus
from annotation.services.batches import change_state, set_annotations_per_item
from annotation.services.labelling import submit_label
from annotation.services.leasing import expire_leases, lease_next_item
from core.errors import Conflict, InvalidInput, NotFound, Unavailable
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db


def lease(batch, participation, **kwargs):
    return lease_next_item(batch, participation, **kwargs)


def rate(participation, outcome, value=3, **kwargs):
    return submit_label(participation.annotator, outcome.assignment.pk, value, 1000, **kwargs)


def test_closest_to_completion_is_leased_first():
    batch = make_batch(n_items=3, per_item=3)
    first = make_participant(batch)
    a = lease(batch, first)
    rate(first, a)
    # item-0 now holds 1 label; a newcomer gets item-0 again, not a fresh item
    second = make_participant(batch)
    b = lease(batch, second)
    assert b.assignment.item_id == a.assignment.item_id
    # the first annotator never gets item-0 again: they get the next in import order
    c = lease(batch, first)
    assert c.assignment.item.item_id == "item-1"


def test_same_open_lease_is_returned_on_repeat_call():
    batch = make_batch()
    participant = make_participant(batch)
    first = lease(batch, participant)
    again = lease(batch, participant)
    assert again.assignment.pk == first.assignment.pk
    assert Assignment.objects.filter(annotator=participant.annotator).count() == 1


def test_never_more_open_leases_plus_labels_than_n():
    batch = make_batch(n_items=1, per_item=2)
    people = [make_participant(batch) for _ in range(4)]
    outcomes = [lease(batch, person) for person in people]
    assert [o.assignment is not None for o in outcomes] == [True, True, False, False]
    assert outcomes[2].reason == "wait"  # the two slots are leased, not yet labelled
    item = Item.objects.get(batch=batch)
    assert (item.reserved_count, item.counted_count) == (2, 0)


def test_annotator_who_labelled_everything_left_is_told_so():
    batch = make_batch(n_items=1, per_item=3)
    person = make_participant(batch)
    rate(person, lease(batch, person))
    outcome = lease(batch, person)
    assert outcome.assignment is None
    assert outcome.reason == "nothing_left_for_you"
    assert outcome.done == 1


def test_quota_limits_items_per_annotator():
    batch = make_batch(n_items=5, per_item=3, quota_per_annotator=2)
    person = make_participant(batch)
    for _ in range(2):
        rate(person, lease(batch, person))
    outcome = lease(batch, person)
    assert outcome.assignment is None
    assert (outcome.reason, outcome.done, outcome.quota) == ("quota_reached", 2, 2)


def test_expired_lease_frees_its_slot_without_a_background_process():
    batch = make_batch(n_items=1, per_item=1, lease_seconds=60)
    late, other = make_participant(batch), make_participant(batch)
    held = lease(batch, late)
    assert lease(batch, other).assignment is None
    later = timezone.now() + timedelta(seconds=61)
    taken = lease(batch, other, now=later)
    assert taken.assignment is not None
    held.assignment.refresh_from_db()
    assert held.assignment.state == "expired"


def test_late_submission_is_counted_when_room_is_left():
    batch = make_batch(n_items=1, per_item=2, lease_seconds=60)
    person = make_participant(batch)
    held = lease(batch, person)
    assert expire_leases(batch, now=timezone.now() + timedelta(seconds=61)) == 1
    outcome = rate(person, held)
    assert outcome.status == LabelStatus.COUNTED
    item = Item.objects.get(batch=batch)
    assert (item.reserved_count, item.counted_count) == (1, 1)


def test_late_submission_to_a_filled_item_is_kept_as_surplus():
    batch = make_batch(n_items=1, per_item=1, lease_seconds=60)
    late, other = make_participant(batch), make_participant(batch)
    held = lease(batch, late)
    later = timezone.now() + timedelta(seconds=61)
    rate(other, lease(batch, other, now=later), value=5)
    outcome = rate(late, held, value=1)
    assert outcome.status == LabelStatus.SURPLUS
    item = Item.objects.get(batch=batch)
    assert item.counted_count == 1
    assert Label.objects.filter(item=item, status="surplus", value=1).count() == 1


def test_identical_retry_is_idempotent_and_changed_value_conflicts():
    batch = make_batch()
    person = make_participant(batch)
    held = lease(batch, person)
    first = rate(person, held, value=4)
    retry = rate(person, held, value=4)
    assert (first.created, retry.created, retry.status) == (True, False, "counted")
    with pytest.raises(Conflict):
        rate(person, held, value=2)
    assert Label.objects.filter(assignment=held.assignment).count() == 1
    assert Item.objects.get(pk=held.assignment.item_id).counted_count == 1


@pytest.mark.parametrize("bad_value", [0, 6, -1, "3", 2.5, None, True])
def test_value_outside_label_set_is_rejected(bad_value):
    batch = make_batch()
    person = make_participant(batch)
    held = lease(batch, person)
    with pytest.raises(InvalidInput) as error:
        submit_label(person.annotator, held.assignment.pk, bad_value, 10)
    assert error.value.field == "value"
    assert not Label.objects.exists()


def test_pairwise_label_set_is_minus_two_to_two():
    batch = make_batch(kind="pairwise")
    person = make_participant(batch)
    held = lease(batch, person)
    with pytest.raises(InvalidInput):
        submit_label(person.annotator, held.assignment.pk, 3, 10)
    assert submit_label(person.annotator, held.assignment.pk, -2, 10).status == "counted"


def test_someone_elses_assignment_is_not_found():
    batch = make_batch()
    owner, stranger = make_participant(batch), make_participant(batch)
    held = lease(batch, owner)
    with pytest.raises(NotFound):
        submit_label(stranger.annotator, held.assignment.pk, 3, 10)
    with pytest.raises(NotFound):
        submit_label(stranger.annotator, "not-a-uuid", 3, 10)


def test_paused_batch_hands_out_nothing_but_accepts_held_labels():
    batch = make_batch()
    person = make_participant(batch)
    held = lease(batch, person)
    batch = change_state(batch, "paused")
    with pytest.raises(Unavailable):
        lease(batch, person)
    assert rate(person, held).status == "counted"


def test_n_cannot_drop_below_what_an_item_holds():
    batch = make_batch(n_items=1, per_item=3)
    people = [make_participant(batch) for _ in range(2)]
    for person in people:
        rate(person, lease(batch, person))
    with pytest.raises(Conflict):
        set_annotations_per_item(batch, 1)
    set_annotations_per_item(batch, 2)
    assert Item.objects.get(batch=batch).target == 2
    assert lease(batch, make_participant(batch)).reason == "drained"


def test_batch_reaches_exactly_n_with_abandonment():
    batch = make_batch(n_items=4, per_item=3, lease_seconds=30)
    now = timezone.now()
    people = [make_participant(batch) for _ in range(8)]
    for round_number in range(6):
        for index, person in enumerate(people):
            outcome = lease(batch, person, now=now)
            if outcome.assignment is None:
                continue
            if (index + round_number) % 3 == 0:
                continue  # abandoned: left to expire
            submit_label(person.annotator, outcome.assignment.pk, 1 + index % 5, 5, now=now)
        now += timedelta(seconds=31)
    counts = list(Item.objects.filter(batch=batch).values_list("counted_count", flat=True))
    assert counts == [3, 3, 3, 3]
    for item in Item.objects.filter(batch=batch):
        assert Label.objects.filter(item=item, status="counted").count() == 3
