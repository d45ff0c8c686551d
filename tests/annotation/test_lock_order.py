"""Row locks are taken in one order by every writer: the participation, then its leases.

An exclusion locks the participation and then the annotator's leases; a label that
locked its lease first and then the participation (to count the participant's regular
labels) could deadlock with it, and PostgreSQL would abort one of the two — the
worker's label or the researcher's exclusion. Here a second connection holds the
participation's lock, as an exclusion in progress does, while the label is submitted:
the label must wait for it without having locked its lease, on both the one-statement
path and the locked path.
"""

import threading

import psycopg
import pytest
from django.db import connection

from annotation.models import Label, Participation
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db(transaction=True)


def _direct_connection() -> psycopg.Connection:
    settings = connection.settings_dict
    return psycopg.connect(
        host=settings["HOST"] or None,
        port=settings["PORT"] or None,
        user=settings["USER"],
        password=settings["PASSWORD"] or None,
        dbname=settings["NAME"],
    )


def _waiting_for_a_lock(other: psycopg.Connection, pid: int) -> bool:
    row = other.execute(
        "SELECT wait_event_type FROM pg_stat_activity WHERE pid = %s", [pid]
    ).fetchone()
    return bool(row) and row[0] == "Lock"


@pytest.mark.parametrize("path", ["one statement", "locked"])
def test_a_label_waits_for_a_held_participation_before_locking_its_lease(path):
    if connection.vendor != "postgresql":
        pytest.skip("row locks are PostgreSQL's")
    batch = make_batch(n_items=2, per_item=2, allow_cant_judge=True)
    participation = make_participant(batch, "lock-order")
    assignment = lease_next_item(batch, participation).assignment
    assert assignment is not None

    outcome: dict = {}

    def label():
        from django.db import connection as thread_connection

        try:
            outcome["pid"] = thread_connection.cursor().connection.info.backend_pid
            outcome["label"] = submit_label(
                participation.annotator,
                assignment.pk,
                None if path == "locked" else 3,
                2000,
                cant_judge=path == "locked",
            )
        except Exception as error:  # noqa: BLE001 - reported by the test below
            outcome["error"] = error
        finally:
            thread_connection.close()

    holder = _direct_connection()
    try:
        holder.execute(
            "SELECT id FROM annotation_participation WHERE id = %s FOR UPDATE",
            [participation.pk],
        )
        worker = threading.Thread(target=label)
        worker.start()
        for _ in range(200):
            if "pid" in outcome and _waiting_for_a_lock(holder, outcome["pid"]):
                break
            worker.join(0.05)
        assert "pid" in outcome and _waiting_for_a_lock(holder, outcome["pid"]), outcome
        # the waiting label holds no lock on its lease: the exclusion could take it next
        holder.execute(
            "SELECT id FROM annotation_assignment WHERE id = %s FOR UPDATE NOWAIT",
            [assignment.pk],
        )
        holder.rollback()
        worker.join(20)
    finally:
        holder.close()
    assert not worker.is_alive()
    assert "error" not in outcome, outcome.get("error")
    stored = Label.objects.get(assignment_id=assignment.pk)
    assert stored.status == ("cant_judge" if path == "locked" else "counted")
    regular = Participation.objects.get(pk=participation.pk).regular_labels
    assert regular == (0 if path == "locked" else 1)
