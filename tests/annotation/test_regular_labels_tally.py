"""Each participation's ``regular_labels`` (what quotas, progress and due checks read)
stays equal to its label rows of regular items, whatever path stored them and whatever
happened to them since: counted in one statement or on the locked path, late (surplus
or counted), excluded and included again, attention checks, repeats and "I can't judge
this" (none of which is a regular label). Runs on both databases; on PostgreSQL the
common case takes the one-statement path, on SQLite the locked one.
"""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import REGULAR_STATUSES, Assignment, Item, Label, Participation
from annotation.services.annotators import exclude_annotator, include_annotator
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.annotation.test_slots import APPS, ROOT, writes_to_fields
from tests.factories import make_batch, make_participant

# the locked path and the one-statement path (docs/SPEC.md, "Exactly N")
TALLY_HOMES = {
    ROOT / "annotation" / "services" / "labelling.py",
    ROOT / "annotation" / "services" / "slots.py",
}

pytestmark = pytest.mark.django_db


def _tally_matches(participation: Participation) -> int:
    participation.refresh_from_db()
    rows = Label.objects.filter(
        batch=participation.batch_id,
        annotator=participation.annotator_id,
        status__in=REGULAR_STATUSES,
    ).count()
    assert participation.regular_labels == rows, (participation.regular_labels, rows)
    return rows


def _answer_next(batch, participation, value=3, **extra):
    outcome = lease_next_item(batch, participation)
    assert outcome.assignment is not None, outcome.reason
    submit_label(participation.annotator, outcome.assignment.pk, value, 1500, **extra)
    return outcome.assignment


def test_the_tally_follows_every_kind_of_label():
    batch = make_batch(n_items=12, per_item=1, check_every=3, repeat_every=4, allow_cant_judge=True)
    check = Item.objects.filter(batch=batch).order_by("position").first()
    Item.objects.filter(pk=check.pk).update(is_check=True, gold=[5], target=0)
    participation = make_participant(batch)
    participation.consented_at = timezone.now()
    participation.save()
    statuses = set()
    for step in range(30):
        outcome = lease_next_item(batch, participation)
        if outcome.assignment is None:
            break
        if step >= 4 and "cant_judge" not in statuses and outcome.assignment.purpose == "regular":
            # "I can't judge this": no regular label, the slot goes back
            submit_label(participation.annotator, outcome.assignment.pk, None, 900, cant_judge=True)
        else:
            submit_label(participation.annotator, outcome.assignment.pk, 5, 1500)
        statuses.add(Label.objects.get(assignment=outcome.assignment).status)
        _tally_matches(participation)
    assert {"counted", "check", "repeat", "cant_judge"} <= statuses, statuses
    assert participation.regular_labels > 0


def test_only_the_labelling_services_write_the_tally():
    found = [
        place
        for app in APPS
        if (ROOT / app).exists()
        for path in (ROOT / app).rglob("*.py")
        if path not in TALLY_HOMES and "migrations" not in path.parts
        for place in writes_to_fields(path, {"regular_labels"})
    ]
    assert not found, found


def test_late_labels_exclusion_and_inclusion_keep_the_tally():
    batch = make_batch(n_items=2, per_item=1)
    late, early = make_participant(batch), make_participant(batch)
    for person in (late, early):
        person.consented_at = timezone.now()
        person.save()
    # a lease that expires, its slot taken and filled by someone else: the late answer
    # becomes surplus, and still is one of the late annotator's regular labels
    first = lease_next_item(batch, late).assignment
    Assignment.objects.filter(pk=first.pk).update(expires_at=timezone.now() - timedelta(1))
    taken = _answer_next(batch, early)
    assert taken.item_id == first.item_id
    submit_label(late.annotator, first.pk, 4, 1500)
    assert Label.objects.get(assignment=first).status == "surplus"
    assert _tally_matches(late) == 1
    _answer_next(batch, late)  # the other item, counted
    assert _tally_matches(late) == 2
    exclude_annotator(batch, late.annotator, reason="test")
    assert _tally_matches(late) == 2  # counted → excluded: still regular labels
    include_annotator(batch, late.annotator)
    assert _tally_matches(late) == 2
    assert _tally_matches(early) == 1
