"""Active time (what the hourly top-up pays for, and fair pay's median) counts each label's
time at most for as long as its lease existed: a body claiming more is not paid more."""

from datetime import timedelta

import pytest

from annotation.models import Label
from annotation.services.labelling import MAX_DURATION_MS, submit_label
from annotation.services.leasing import lease_next_item
from crowd.services.active_time import active_ms_by_annotator
from crowd.services.fairpay import fair_pay
from tests.crowd.helpers import label_items
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db


def test_a_label_counts_no_longer_than_its_lease_existed():
    batch = make_batch(n_items=4, per_item=1)
    honest, inflating = make_participant(batch, "honest"), make_participant(batch, "inflating")
    label_items(batch, honest, 2, duration_ms=45_000)
    for claimed, after in ((MAX_DURATION_MS, 30), (20_000, 50)):  # 24.8 days; then honest
        lease = lease_next_item(batch, inflating).assignment
        sent = lease.leased_at + timedelta(seconds=after)
        submit_label(inflating.annotator, lease.pk, 3, claimed, sent)
    assert active_ms_by_annotator(batch) == {
        honest.annotator_id: 90_000,
        inflating.annotator_id: 30_000 + 20_000,
    }
    # the label keeps what the page sent
    kept = Label.objects.filter(annotator=inflating.annotator).values_list("duration_ms", flat=True)
    assert sorted(kept) == [20_000, MAX_DURATION_MS]
    assert fair_pay(batch).median_active_seconds == 70


def test_labels_without_a_time_add_nothing():
    batch = make_batch(n_items=2, per_item=1)
    person = make_participant(batch, "untimed")
    lease = lease_next_item(batch, person).assignment
    submit_label(person.annotator, lease.pk, 3, None, lease.leased_at + timedelta(seconds=9))
    assert active_ms_by_annotator(batch) == {}
