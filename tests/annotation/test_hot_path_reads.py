"""What a request for work reads must not grow with the number of people at work.

PostgreSQL's statistics are taken when few leases are open (a database between waves of
work, or one analysed by autovacuum after labels came in), so its planner sees open
leases as rare and is free to answer "this person's open lease" through the batch's
open leases. These tests take the statistics that way, put many people at work, and
count the index entries and rows the statement read (PostgreSQL's own per-transaction
counters), for the read of every ``next`` and for the entry page's.
"""

import pytest
from django.db import connection
from django.utils import timezone

from annotation.models import Annotator, Assignment, Batch, Item, Label, Participation
from annotation.services.leasing import lease_next_item, participation_for_work
from annotation.services.work_state import read_entry_state, read_work_state
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db

AT_WORK = 40  # people holding a lease while the statement runs
MOST_READ = 6  # entries and rows of the assignment table and its indexes


def _assignment_reads() -> int:
    """Rows and index entries of the assignment table read so far in this transaction."""
    with connection.cursor() as cursor:
        cursor.execute(
            """SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(c.oid)), 0)
               FROM pg_class c
               WHERE c.oid = 'annotation_assignment'::regclass
                  OR c.oid IN (SELECT indexrelid FROM pg_index
                               WHERE indrelid = 'annotation_assignment'::regclass)"""
        )
        return cursor.fetchone()[0]


def _reads_of(read) -> int:
    before = _assignment_reads()
    read()
    return _assignment_reads() - before


def _past_work(participation, items) -> None:
    """Submitted assignments of the participant over ``items``: a table the size of a
    study's, without going through a label each (only reads are measured)."""
    now = timezone.now()
    Assignment.objects.bulk_create(
        Assignment(
            batch=participation.batch,
            item=item,
            annotator=participation.annotator,
            state="submitted",
            leased_at=now,
            expires_at=now,
            submitted_at=now,
        )
        for item in items
    )


# The tables whose statistics the measured statements are planned from.
MEASURED_TABLES = [
    model._meta.db_table for model in (Assignment, Item, Participation, Annotator, Batch, Label)
]


@pytest.fixture(scope="module", autouse=True)
def statistics_only_from_the_test(django_db_setup, django_db_blocker):
    """No autovacuum on the measured tables while these tests run. A test's rows are
    rolled back, which leaves them dead, so autovacuum soon vacuums tables a test is still
    writing, and a vacuum writes the table's size into ``pg_class`` in place, outside any
    transaction: the planner of a test that took its own statistics (``ANALYZE``) is then
    told the table is empty, and the plans these tests pin change under them (seen once in
    a CI run: 1,538 -> 1,594 entries read). Set and reset outside the tests' transactions,
    so that autovacuum sees it; every other test keeps autovacuum."""
    if connection.vendor != "postgresql":
        yield
        return

    def set_autovacuum(option: str) -> None:
        with django_db_blocker.unblock(), connection.cursor() as cursor:
            for table in MEASURED_TABLES:
                cursor.execute(f"ALTER TABLE {connection.ops.quote_name(table)} {option}")

    set_autovacuum("SET (autovacuum_enabled = off)")
    yield
    set_autovacuum("RESET (autovacuum_enabled)")


@pytest.fixture
def busy_batch():
    """A batch with a history (40 people who judged every item, and the one measured, who
    judged most), statistics taken while no lease was open, then ``AT_WORK`` people each
    holding a lease, the one measured among them: (batch, their participation)."""
    if connection.vendor != "postgresql":
        pytest.skip("the planner and its statistics are PostgreSQL's")
    batch = make_batch(n_items=200, per_item=25)
    items = list(batch.items.order_by("position"))
    for n in range(40):
        _past_work(make_participant(batch, f"earlier-{n}"), items)
    measured = make_participant(batch, "measured")
    _past_work(measured, items[:150])
    with connection.cursor() as cursor:
        cursor.execute("ANALYZE")
    assert not Assignment.objects.filter(batch=batch, state="open").exists()
    for participation in [make_participant(batch, f"at-work-{n}") for n in range(AT_WORK - 1)]:
        assert lease_next_item(batch, participation).assignment is not None
    assert lease_next_item(batch, measured).assignment is not None
    return batch, measured


def test_the_work_state_reads_only_the_persons_own_lease(busy_batch):
    batch, participation = busy_batch
    now = timezone.now()
    found = []
    reads = _reads_of(
        lambda: found.append(participation_for_work(batch.slug, participation.annotator_id, now))
    )
    held = Assignment.objects.get(annotator=participation.annotator, state="open")
    assert found[0][1].held_lease == held.pk
    assert reads <= MOST_READ, f"{reads} assignment rows/entries read with {AT_WORK} at work"
    reads = _reads_of(lambda: found.append(read_work_state(participation, now)))
    assert found[1].held_lease == held.pk
    assert reads <= MOST_READ, f"{reads} assignment rows/entries read with {AT_WORK} at work"


def test_the_entry_page_reads_the_same_however_many_are_at_work(busy_batch):
    batch, participation = busy_batch
    found = []

    def read():
        found.append(read_entry_state(batch, participation.annotator_id, timezone.now()))

    reads = _reads_of(read)
    for n in range(AT_WORK):  # as many again
        newcomer = make_participant(batch, f"also-at-work-{n}")
        assert lease_next_item(batch, newcomer).assignment is not None
    reads_now = _reads_of(read)
    assert all(state.holds_lease and state.participation == participation for state in found)
    # whether a slot is still free for them reads their own history; never other people's
    assert reads_now <= reads + 1, f"{reads} → {reads_now} rows/entries read"
