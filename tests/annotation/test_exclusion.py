"""Excluding an annotator mid-study: labels kept as excluded, slots reopened, still N."""

import pytest

from annotation.models import Item, Label, Participation
from annotation.services.annotators import exclude_annotator, include_annotator
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db


def rate_until_drained(batch, people, value=3):
    progress = True
    while progress:
        progress = False
        for person in people:
            outcome = lease_next_item(batch, person)
            if outcome.assignment is not None:
                submit_label(person.annotator, outcome.assignment.pk, value, 100)
                progress = True


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
