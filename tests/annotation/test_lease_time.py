"""A lease is dated when it is made, not when the request that asked for it began: the
request may wait for the participant's lock (or SQLite's write lock) meanwhile, and a
lease dated before the wait would be shorter than the batch's lease time and would seem
to overlap the participant's previous lease, given back by someone else during the wait
(seen as "held two bundles at once" in the threaded-server scenario)."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import Assignment
from annotation.services.leasing import lease_next_item
from tests.annotation.bundled import bundled_batch
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db

WAITED = timedelta(seconds=5)


@pytest.mark.parametrize("design", ["plain", "bundled", "checks"])
def test_a_lease_is_dated_after_the_wait_and_lasts_the_whole_lease_time(design):
    if design == "bundled":
        batch = bundled_batch("dated")
    elif design == "checks":
        batch = make_batch(n_items=4, check_every=2)
    else:
        batch = make_batch(n_items=3, max_concurrent_annotators=5)  # the locked path
    person = make_participant(batch)
    asked_at = timezone.now() - WAITED  # the request began, then waited this long
    before_lease = timezone.now()
    outcome = lease_next_item(batch, person, now=asked_at)
    assert outcome.assignment is not None
    lease = Assignment.objects.get(pk=outcome.assignment.pk)
    assert lease.leased_at >= before_lease
    assert lease.expires_at - lease.leased_at == timedelta(seconds=batch.lease_seconds)
