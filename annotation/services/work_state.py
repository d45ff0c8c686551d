"""What deciding a lease needs to know about a participant, read in one query.

``lease_next_item`` (``annotation.services.leasing``) decides from a ``WorkState``: the
participant's status, consent and questionnaire, when their next attention check and repeat
are due, their regular labels so far, whether the batch holds expired leases to give back,
and their own unexpired lease. The crowdworker API reads it with the participation and the
batch in one statement (``participation_for_work``); other callers annotate a participation
query with ``work_state_fields`` (``read_work_state``). Both must stay one round trip: this
is read on every request for work.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime
from functools import cache, partial

from django.db.models import Exists, OuterRef, Subquery

from annotation.models import (
    Assignment,
    AssignmentState,
    Batch,
    Item,
    Participation,
)
from annotation.services import admission, bundles, sql
from core.errors import NotFound


@dataclass(frozen=True)
class WorkState:
    """What deciding a lease needs to know about a participant, read in one query
    (``work_state_fields``): their status, consent and questionnaire, when their next
    attention check and repeat are due, their regular labels so far (``done``), whether
    the batch holds expired leases to give back, and their own unexpired lease."""

    status: str
    consented_at: datetime | None
    answered_at: datetime | None
    next_check_after: int | None
    next_repeat_after: int | None
    done: int
    stale_leases: bool
    held_lease: uuid.UUID | None

    @classmethod
    def of(cls, row) -> "WorkState":
        """From a participation (or a ``values()`` dict) annotated by ``work_state_fields``."""
        get = row.get if isinstance(row, dict) else partial(getattr, row)
        return cls(
            status=get("status"),
            consented_at=get("consented_at"),
            answered_at=get("answered_at"),
            next_check_after=get("next_check_after"),
            next_repeat_after=get("next_repeat_after"),
            done=get("regular_labels") or 0,
            stale_leases=bool(get("work_stale_leases")),
            held_lease=get("work_held_lease"),
        )


def work_state_fields(batch_ref, annotator_ref, now: datetime) -> dict:
    """Annotations of a participation query that make up its ``WorkState`` with the
    participation's own columns (``WORK_STATE_COLUMNS``); ``batch_ref`` and
    ``annotator_ref`` name the batch and the annotator (``OuterRef("batch_id")`` and
    ``OuterRef("annotator_id")``)."""
    held = (
        Assignment.objects.filter(
            batch_id=batch_ref,
            annotator_id=annotator_ref,
            state=AssignmentState.OPEN,
            expires_at__gt=now,
        )
        .order_by("position_in_bundle")
        .values("pk")[:1]
    )
    stale = Assignment.objects.filter(
        batch_id=batch_ref, state=AssignmentState.OPEN, expires_at__lte=now
    )
    return {
        "work_stale_leases": Exists(stale),
        "work_held_lease": Subquery(held),
    }


def participation_for_work(
    batch_slug: str, annotator_pk: int, now: datetime
) -> tuple[Participation, WorkState] | None:
    """The annotator's participation in the batch (its ``batch`` loaded) and its
    ``WorkState``, in one query — what a request for work needs before deciding — or
    ``None`` when there is no such participation (``annotation.services.sql``)."""
    with sql.cursor() as cursor:
        cursor.execute(
            _work_state_sql(), {"slug": batch_slug, "annotator": annotator_pk, "now": now}
        )
        row = cursor.fetchone()
    if row is None:
        return None
    n_participation = len(sql.columns(Participation))
    n_batch = len(sql.columns(Batch))
    participation = sql.instance(Participation, row[:n_participation])
    participation.batch = sql.instance(Batch, row[n_participation : n_participation + n_batch])
    stale, held = row[n_participation + n_batch :]
    state = WorkState(
        status=participation.status,
        consented_at=participation.consented_at,
        answered_at=participation.answered_at,
        next_check_after=participation.next_check_after,
        next_repeat_after=participation.next_repeat_after,
        done=participation.regular_labels,
        stale_leases=bool(stale),
        held_lease=uuid.UUID(str(held)) if held is not None else None,
    )
    return participation, state


@sql.statement
def _work_state_sql() -> str:
    assignment = sql.table(Assignment)
    return f"""
        SELECT {sql.select_list(Participation, "p")}, {sql.select_list(Batch, "b")},
            EXISTS (SELECT 1 FROM {assignment} a
                    WHERE a.batch_id = p.batch_id AND a.state = 'open'
                      AND a.expires_at <= %(now)s),
            (SELECT a.id FROM {assignment} a
             WHERE a.batch_id = p.batch_id AND a.annotator_id = p.annotator_id
               AND a.state = 'open' AND a.expires_at > %(now)s
             ORDER BY a.position_in_bundle LIMIT 1)
        FROM {sql.table(Participation)} p JOIN {sql.table(Batch)} b ON b.id = p.batch_id
        WHERE b.slug = %(slug)s AND p.annotator_id = %(annotator)s
    """


def read_work_state(participation: Participation, now: datetime) -> WorkState:
    row = (
        Participation.objects.filter(pk=participation.pk)
        .annotate(**work_state_fields(OuterRef("batch_id"), OuterRef("annotator_id"), now))
        .values(*WORK_STATE_COLUMNS, "work_stale_leases", "work_held_lease")
        .first()
    )
    if row is None:
        raise NotFound("This annotator has not entered the batch.")
    return WorkState.of(row)


WORK_STATE_COLUMNS = (
    "status",
    "consented_at",
    "answered_at",
    "next_check_after",
    "next_repeat_after",
    "regular_labels",
)


@dataclass(frozen=True)
class EntryState:
    """What the entry page needs to decide about a worker, read in one query
    (``read_entry_state``): their participation in the batch (``None`` for a newcomer),
    whether the batch holds expired leases to give back first, whether they hold an
    unexpired lease, and whether a slot they could take is free (``admission``'s
    ``takeable_items``)."""

    participation: Participation | None
    stale_leases: bool
    holds_lease: bool
    takeable: bool


def read_entry_state(batch: Batch, annotator_pk: int, now: datetime) -> EntryState:
    """``EntryState`` in one statement. In a bundled batch what is takeable depends on the
    bundles the annotator touched: that is asked of ``admission.takeable_items`` apart."""
    bundled = bundles.is_bundled(batch)
    params = {"batch": batch.pk, "annotator": annotator_pk, "now": now}
    with sql.cursor() as cursor:
        cursor.execute(_entry_state_sql(bundled), params)
        row = cursor.fetchone()
    stale, holds, takeable = (bool(value) for value in row[:3])
    found = row[3] is not None
    participation = sql.instance(Participation, row[3:]) if found else None
    if bundled:
        takeable = admission.takeable_items(batch, annotator_pk).exists()
    return EntryState(participation, stale, holds, takeable)


@cache
def _entry_state_sql(bundled: bool) -> str:
    item, assignment = sql.table(Item), sql.table(Assignment)
    takeable = (
        "FALSE"  # asked apart (read_entry_state)
        if bundled
        else f"""EXISTS (SELECT 1 FROM {item} i
                 WHERE i.batch_id = %(batch)s AND i.reserved_count < i.target
                   AND NOT EXISTS (SELECT 1 FROM {assignment} a
                                   WHERE a.item_id = i.id AND a.annotator_id = %(annotator)s))"""
    )
    return f"""
        SELECT
            EXISTS (SELECT 1 FROM {assignment} a
                    WHERE a.batch_id = %(batch)s AND a.state = 'open'
                      AND a.expires_at <= %(now)s),
            EXISTS (SELECT 1 FROM {assignment} a
                    WHERE a.batch_id = %(batch)s AND a.annotator_id = %(annotator)s
                      AND a.state = 'open' AND a.expires_at > %(now)s),
            {takeable},
            {sql.select_list(Participation, "p")}
        FROM (SELECT 1 AS one) AS one
        LEFT JOIN {sql.table(Participation)} p
            ON p.batch_id = %(batch)s AND p.annotator_id = %(annotator)s
    """
