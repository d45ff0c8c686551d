"""What deciding a lease needs to know about a participant, read in one query.

``lease_next_item`` (``annotation.services.leasing``) decides from a ``WorkState``: the
participant's status, consent and questionnaire, when their next attention check and repeat
are due, their regular labels so far, whether the batch holds expired leases to give back,
and their own unexpired lease. The crowdworker API reads it with the participation and the
batch in one statement (``participation_for_work``), other callers by the participation
(``read_work_state``); both must stay one round trip: this is read on every request for
work. The annotator's own lease is found among their own open leases
(``_own_open_leases``), never among the batch's: how many people are at work must not
change what a request reads.
"""

import uuid
from dataclasses import dataclass
from datetime import datetime
from functools import cache

from django.db import connection

from annotation.models import (
    Assignment,
    Batch,
    Item,
    Participation,
)
from annotation.services import admission, bundles, known_batches, slots, sql
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


def participation_for_work(
    batch_slug: str, annotator_pk: int, now: datetime
) -> tuple[Participation, WorkState] | None:
    """The annotator's participation in the batch (its ``batch`` loaded) and its
    ``WorkState``, in one query — what a request for work needs before deciding — or
    ``None`` when there is no such participation (``annotation.services.sql``)."""
    with sql.cursor() as cursor:
        cursor.execute(
            _work_state_sql("b.slug = %(slug)s"),
            {"slug": batch_slug, "annotator": annotator_pk, "now": now},
        )
        row = cursor.fetchone()
    if row is None:
        return None
    return _participation_and_state(row)


def _participation_and_state(row) -> tuple[Participation, WorkState]:
    """A row of ``_work_state_sql``: the participation (its ``batch`` loaded) and its state."""
    n_participation = len(sql.columns(Participation))
    n_batch = len(sql.columns(Batch))
    participation = sql.instance(Participation, row[:n_participation])
    participation.batch = sql.instance(Batch, row[n_participation : n_participation + n_batch])
    stale, held, version = row[n_participation + n_batch :]
    known_batches.remember(row[n_participation : n_participation + n_batch], version)
    return participation, _state_of(participation, stale, held)


def _state_of(participation: Participation, stale, held) -> WorkState:
    return WorkState(
        status=participation.status,
        consented_at=participation.consented_at,
        answered_at=participation.answered_at,
        next_check_after=participation.next_check_after,
        next_repeat_after=participation.next_repeat_after,
        done=participation.regular_labels,
        stale_leases=bool(stale),
        held_lease=uuid.UUID(str(held)) if held is not None else None,
    )


@dataclass(frozen=True)
class StateAndLease:
    """What ``lease_with_work_state`` read and did: the participation (its ``batch`` the
    process's copy), its ``WorkState``, the regular lease it took (``None``: it took
    none), and whether it tried to (the participant was ready for a regular item: no
    candidate was free)."""

    participation: Participation
    state: WorkState
    slot: tuple[int, str] | None
    tried: bool


def lease_with_work_state(
    batch: Batch, version: str, annotator_pk: int, browser_key: str, lease: dict
) -> StateAndLease | None:
    """PostgreSQL: the participant's ``WorkState`` and, when it leaves nothing to decide,
    their next regular lease, in **one** statement (``slots.lease_ctes``), for ``batch``
    as this process knows it (``known_batches``: the statement checks that the row is
    still at ``version``).

    The lease is taken only when the participant is ready for a regular item and nothing
    else is to be done first: active, bound to this browser (``browser_key``) or none,
    consented and questionnaire answered where the batch asks for them, holding no
    unexpired lease, under their quota, no attention check or repeat due (nor a due point
    still to be drawn), and no expired lease in the batch to give back — the conditions
    under which ``leasing.lease_next_item`` takes the one-statement lease. The caller
    passes ``slots.lease_parameters`` as ``lease`` and decides only batch-wide settings
    (no cap on concurrent workers, no bundles, live). ``None`` when the participation does
    not exist or the batch row changed: the caller then reads both afresh."""
    params = {
        **lease,
        "version": version,
        "browser_key": browser_key,
        "needs_consent": admission.asks_for_consent(batch),
        "needs_questionnaire": admission.asks_questionnaire(batch),
        "quota": batch.quota_per_annotator,
        "checks": bool(batch.check_every),
        "repeats": bool(batch.repeat_every),
    }
    statement = _state_and_lease_statement(bool(batch.task_kind.comparison))
    with sql.cursor() as cursor:
        cursor.execute(statement, params)
        row = cursor.fetchone()
    if row is None:
        return None
    n_participation = len(sql.columns(Participation))
    stale, held, fresh, tried, item_pk, order = row[n_participation:]
    if not fresh:
        return None
    participation = sql.instance(Participation, row[:n_participation])
    participation.batch = batch
    slot = (item_pk, order) if item_pk is not None else None
    return StateAndLease(participation, _state_of(participation, stale, held), slot, tried)


# the participant is ready for a regular lease and nothing else is to be decided first:
# ``admission.require_ready``, ``quality.is_due`` (for checks and repeats) and
# ``leasing.lease_next_item``'s order of precedence, said in SQL (each condition
# removed fails a test in tests/annotation/test_known_batches.py)
_READY_FOR_A_REGULAR_ITEM = """(
    SELECT s.id FROM state s
    WHERE s.fresh AND NOT s.stale AND s.held IS NULL AND s.departed_at IS NULL
      AND (s.browser_key = '' OR s.browser_key = %(browser_key)s)
      AND (s.consented_at IS NOT NULL OR NOT CAST(%(needs_consent)s AS boolean))
      AND (s.answered_at IS NOT NULL OR NOT CAST(%(needs_questionnaire)s AS boolean))
      AND s.regular_labels < COALESCE(CAST(%(quota)s AS integer), 2147483647)
      AND NOT (CAST(%(checks)s AS boolean)
               AND (s.next_check_after IS NULL OR s.regular_labels >= s.next_check_after))
      AND NOT (CAST(%(repeats)s AS boolean)
               AND (s.next_repeat_after IS NULL OR s.regular_labels >= s.next_repeat_after)))"""


@cache
def _state_and_lease_statement(comparison: bool) -> str:
    return f"""
        WITH {_own_open_leases("postgresql")},
        state AS (
            SELECT {sql.select_list(Participation, "p")},
                {_stale_leases("p.batch_id")} AS stale, {_held_lease("p.batch_id")} AS held,
                b.xmin::text = %(version)s AS fresh
            FROM {sql.table(Participation)} p JOIN {sql.table(Batch)} b ON b.id = p.batch_id
            WHERE p.batch_id = %(batch)s AND p.annotator_id = %(annotator)s
        ),
        {slots.lease_ctes(comparison, _READY_FOR_A_REGULAR_ITEM)}
        SELECT s.*, EXISTS (SELECT 1 FROM seen), l.item_id, l.shown_order
        FROM state s LEFT JOIN leased l ON TRUE
    """


def _own_open_leases(vendor: str) -> str:
    """A ``WITH`` entry, ``mine``: the annotator's (``%(annotator)s``) open leases in every
    batch — a handful at most. It is asked by annotator alone, kept apart by
    ``MATERIALIZED``, so that it is always read through ``assignment_annotator_state``:
    asked together with the batch, PostgreSQL answers through ``assignment_open_expiry``
    whenever its statistics see open leases as rare (they always do) and reads every open
    lease of the batch — one per person at work — to find this person's."""
    # SQLite before 3.35 (which Django still supports) knows no MATERIALIZED; its planner
    # needs none
    fence = "MATERIALIZED" if vendor == "postgresql" else ""
    return f"""mine AS {fence} (
        SELECT a.id, a.batch_id, a.expires_at, a.position_in_bundle
        FROM {sql.table(Assignment)} a
        WHERE a.annotator_id = %(annotator)s AND a.state = 'open')"""


def _held_lease(batch: str) -> str:
    """The annotator's unexpired lease in ``batch`` (its first bundle position), from
    ``mine`` (``_own_open_leases``)."""
    return f"""(SELECT m.id FROM mine m
             WHERE m.batch_id = {batch} AND m.expires_at > %(now)s
             ORDER BY m.position_in_bundle LIMIT 1)"""


def _stale_leases(batch: str) -> str:
    """Whether ``batch`` holds an expired lease to give back: whether its open lease that
    expires first has expired. Asked in that order, it is the first entry of
    ``assignment_open_expiry`` (which holds them in that order: no sort to choose it over),
    however rare the statistics believe open leases to be."""
    return f"""COALESCE((SELECT a.expires_at <= %(now)s FROM {sql.table(Assignment)} a
                         WHERE a.batch_id = {batch} AND a.state = 'open'
                         ORDER BY a.expires_at LIMIT 1), FALSE)"""


def _work_state_sql(where: str) -> str:
    return _work_state_statement(where, connection.vendor)


@cache
def _work_state_statement(where: str, vendor: str) -> str:
    return f"""
        WITH {_own_open_leases(vendor)}
        SELECT {sql.select_list(Participation, "p")}, {sql.select_list(Batch, "b")},
            {_stale_leases("p.batch_id")}, {_held_lease("p.batch_id")},
            {known_batches.version_of("b", vendor)}
        FROM {sql.table(Participation)} p JOIN {sql.table(Batch)} b ON b.id = p.batch_id
        WHERE {where} AND p.annotator_id = %(annotator)s
    """


def read_work_state(participation: Participation, now: datetime) -> WorkState:
    """The participation's ``WorkState`` as it is now in the database, in one query."""
    params = {"batch": participation.batch_id, "annotator": participation.annotator_id}
    with sql.cursor() as cursor:
        cursor.execute(_work_state_sql("p.batch_id = %(batch)s"), {**params, "now": now})
        row = cursor.fetchone()
    if row is None:
        raise NotFound("This annotator has not entered the batch.")
    return _participation_and_state(row)[1]


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


def _entry_state_sql(bundled: bool) -> str:
    return _entry_state_statement(bundled, connection.vendor)


@cache
def _entry_state_statement(bundled: bool, vendor: str) -> str:
    item, assignment = sql.table(Item), sql.table(Assignment)
    probe = " OFFSET 0" if vendor == "postgresql" else ""  # SQLite: no OFFSET without LIMIT
    takeable = (
        "FALSE"  # asked apart (read_entry_state)
        if bundled
        # OFFSET 0: one probe of the person's own leases per item, as the lease does
        # (``slots.lease_ctes``): made a join, PostgreSQL may read other people's leases
        else f"""EXISTS (SELECT 1 FROM {item} i
                 WHERE i.batch_id = %(batch)s AND i.reserved_count < i.target
                   AND NOT EXISTS (SELECT 1 FROM {assignment} a
                                   WHERE a.item_id = i.id AND a.annotator_id = %(annotator)s
                                     AND a.purpose <> 'repeat'{probe}))"""
    )
    return f"""
        WITH {_own_open_leases(vendor)}
        SELECT
            {_stale_leases("%(batch)s")},
            {_held_lease("%(batch)s")} IS NOT NULL,
            {takeable},
            {sql.select_list(Participation, "p")}
        FROM (SELECT 1 AS one) AS one
        LEFT JOIN {sql.table(Participation)} p
            ON p.batch_id = %(batch)s AND p.annotator_id = %(annotator)s
    """
