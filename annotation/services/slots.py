"""The exactly-N counters: the only code that changes an item's ``reserved_count``,
``counted_count`` and ``target``.

Each item holds N (``target``, the batch's ``annotations_per_item``) slots. A slot is
*reserved* while a lease holds it or a counted label fills it, and *counted* once the
label is stored. The database keeps ``0 <= counted_count <= reserved_count <= target``
with check constraints, and every change below is a single conditional ``UPDATE`` on the
item row, so that even a bug elsewhere cannot push an item over N.

Pairs are shown in one of two orders (``ab``: A first, ``ba``: B first). The reserved
slots of each order are counted too (``reserved_ab``, ``reserved_ba``), and each order
may hold at most ceil(N / 2) of them (a check constraint as well): a new lease takes the
order with fewer, and a late or re-included label counts only where its own order still
has room. A complete item therefore shows A first and B first equally often (|ab − ba|
≤ 1) whatever expires, arrives late or is excluded. Items of other kinds use order "".

Attention checks (``is_check``) have no slots at all (``target`` 0): they are never
counted toward any N.

Locking: callers run these inside ``transaction.atomic()``. Changes to several items are
applied in ascending item order, so two transactions never wait on each other in a cycle.
The rows that decide *whether* to change a counter (the lease being submitted, the
participation being excluded) are locked by the caller before calling, as each function
says.

A test (``tests/annotation/test_slots.py``) fails if any other module writes these fields.
"""

import random
import uuid
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import NamedTuple

from django.db import connection
from django.db.models import F, Max, Q

from annotation.models import Assignment, Batch, Item, Label, Participation
from annotation.services import sql
from core.errors import Conflict

# Columns and values of a new item's counters (the importer's multi-row INSERT).
NEW_ITEM_COUNTER_COLUMNS = (
    "target",
    "reserved_count",
    "counted_count",
    "reserved_ab",
    "reserved_ba",
)
ORDERS = ("ab", "ba")
# (item pk, presentation order or "") — what a lease or a label holds
Slot = tuple[int, str]


def new_item_counters(batch: Batch, *, is_check: bool = False) -> tuple[int, ...]:
    """The counters of an item imported into ``batch`` (``NEW_ITEM_COUNTER_COLUMNS``):
    N free slots, or none for an attention check."""
    return (0 if is_check else batch.annotations_per_item), 0, 0, 0, 0


def order_capacity(target: int) -> int:
    """Slots one presentation order may hold: ceil(N / 2)."""
    return (target + 1) // 2


def choose_order(reserved_ab: int, reserved_ba: int) -> str:
    """The order a new lease of a pair shows: the one with fewer slots, ties at random."""
    if reserved_ab != reserved_ba:
        return "ab" if reserved_ab < reserved_ba else "ba"
    return random.choice(ORDERS)


def _with_order(order: str, change: int) -> dict:
    return {f"reserved_{order}": F(f"reserved_{order}") + change} if order else {}


def _order_has_room(order: str) -> Q:
    if not order:
        return Q()
    # 2 * (reserved_<order> + 1) <= target + 1, i.e. one more stays within ceil(N / 2)
    return Q(**{f"reserved_{order}__lt": (F("target") + 1) / 2})


def take_slot(item_pk: int, order: str = "") -> bool:
    """Reserve one slot for a new lease (of presentation ``order``), if the item has one.

    The caller has read ``item_pk`` as a candidate (locked with ``FOR UPDATE SKIP
    LOCKED`` on PostgreSQL); the condition is checked again by the ``UPDATE`` itself.
    """
    return bool(
        Item.objects.filter(
            _order_has_room(order), pk=item_pk, reserved_count__lt=F("target")
        ).update(reserved_count=F("reserved_count") + 1, **_with_order(order, 1))
    )


def lease_in_one_statement(
    *,
    batch_pk: int,
    annotator_pk: int,
    participation_pk: int,
    assignment_pk: uuid.UUID,
    now: datetime,
    expires_at: datetime,
    comparison: bool,
) -> Slot | None:
    """PostgreSQL: choose the annotator's next regular item, take its slot and record the
    lease in **one** statement (one round trip, its own transaction in autocommit).

    The statement, in order: marks the participation seen — only while it is active, and
    the row lock this takes serialises it with an exclusion, which locks the same row —;
    picks the unlocked item closest to completion that has a free slot and that this
    annotator was never leased (``FOR UPDATE SKIP LOCKED``); takes the slot with the
    conditional ``reserved_count < target`` (a pair: in the order with fewer slots, ties
    at random, within ceil(N/2)); and inserts the open regular lease. Row locks last for
    the statement only, so annotators contend for the top item for microseconds.

    Returns ``(item pk, shown order)``, or ``None`` when no unlocked candidate was found
    (or the participation is not active): the caller then takes the portable path, which
    waits for locked candidates and says why there is no work. Two concurrent calls of
    the same annotator can both pass the checks on the statement's snapshot; the unique
    constraints on assignments then refuse the second (``IntegrityError``; the whole
    statement, slot included, is rolled back) and the caller hands out the first lease.
    """
    statement = _lease_statement(connection.vendor, comparison)
    params = lease_parameters(
        batch_pk=batch_pk,
        annotator_pk=annotator_pk,
        assignment_pk=assignment_pk,
        now=now,
        expires_at=expires_at,
        comparison=comparison,
    )
    params["participation"] = participation_pk
    with sql.cursor() as cursor:
        cursor.execute(statement, params)
        row = cursor.fetchone()
    return (row[0], row[1]) if row else None


@dataclass(frozen=True)
class BatchGuard:
    """What a label written without reading the lease first requires of the database:
    the batch row still at ``version`` (``known_batches``: its settings, by which the
    value was checked, are the ones in force) and the participation bound to no browser
    or to one of ``browser_keys`` (the submitting browser's)."""

    batch_pk: int
    version: str
    browser_keys: frozenset[str]


class StoredLabel(NamedTuple):
    pk: int
    item_pk: int
    shown_order: str
    position_in_bundle: int | None


def count_label_in_one_statement(
    *,
    assignment_pk: uuid.UUID,
    annotator_pk: int,
    label: dict,
    now: datetime,
    guard: BatchGuard | None = None,
    shown_ba: dict | None = None,
) -> StoredLabel | None:
    """PostgreSQL: store the label of an open regular lease as ``counted`` in **one**
    statement: the lease becomes submitted, its reserved slot counted, the participant's
    ``regular_labels`` counted up (as ``labelling`` does on its locked path), and the label
    row is inserted (``label``: the ``Label`` columns other than the assignment, its batch,
    item, annotator, order, position in a bundle, status and time, which come from the
    lease; ``shown_ba``: the columns whose value differs when the lease showed a pair B
    first, for a caller that has not read the lease).

    The participation's row is locked first (``member``), then the lease's (the
    ``UPDATE``): the order every writer takes them in (an exclusion, the locked leasing
    path), so that a label and an exclusion wait for each other instead of deadlocking.
    If an exclusion or an expiry got there first, the participant is excluded or the lease
    is no longer ``open``, and nothing is written; so too when ``guard`` does not hold.
    Returns the new label, or ``None`` (the lease is not an open regular lease of this
    annotator, the annotator is excluded, or the guard failed): the caller then reads the
    lease, or takes the locked path, which decides counted, surplus or excluded.
    """
    shown_ba = shown_ba or {}
    statement = _count_label_statement(
        connection.vendor, tuple(sorted(label)), tuple(sorted(shown_ba)), guard is not None
    )
    params = {"now": now, "assignment": assignment_pk, "annotator": annotator_pk}
    params.update({f"label_{column}": value for column, value in label.items()})
    params.update({f"label_ba_{column}": value for column, value in shown_ba.items()})
    if guard is not None:
        params.update(
            batch=guard.batch_pk,
            batch_version=guard.version,
            browser_keys=sorted(guard.browser_keys),
        )
    with sql.cursor() as cursor:
        cursor.execute(statement, params)
        row = cursor.fetchone()
    return StoredLabel(*row) if row else None


def lease_parameters(
    *,
    batch_pk: int,
    annotator_pk: int,
    assignment_pk: uuid.UUID,
    now: datetime,
    expires_at: datetime,
    comparison: bool,
) -> dict:
    """The parameters of ``lease_ctes`` but the participation."""
    return {
        "now": now,
        "expires": expires_at,
        "batch": batch_pk,
        "annotator": annotator_pk,
        "assignment": assignment_pk,
        "tie": random.choice(ORDERS) if comparison else "",
    }


@lru_cache(maxsize=4)
def _lease_statement(vendor: str, comparison: bool) -> str:
    """The text of ``lease_in_one_statement``'s statement, built once per process (it
    depends only on whether items are pairs): the hot path only binds parameters."""
    return f"""
        WITH {lease_ctes(comparison, "%(participation)s")}
        SELECT item_id, shown_order FROM leased
    """


@lru_cache(maxsize=8)
def lease_ctes(comparison: bool, participation: str) -> str:
    """The ``WITH`` entries of a regular lease in one statement (``lease_in_one_statement``
    says what they do), the last of them ``leased`` (its ``item_id, shown_order``), for
    the participation whose id ``participation`` gives (an expression: a parameter, or a
    subquery that gives no row when the lease must not be made), with the parameters of
    ``lease_parameters``. The one text of that lease: the crowdworker's request for work
    (``worker_lease``) runs it after reading the participant's state in the same
    statement."""
    item = Item._meta.db_table
    assignment = Assignment._meta.db_table
    order_sql = (
        "CASE WHEN c.reserved_ab < c.reserved_ba THEN 'ab' "
        "WHEN c.reserved_ab > c.reserved_ba THEN 'ba' ELSE %(tie)s END"
        if comparison
        else "''"
    )
    return f"""
        seen AS (
            UPDATE {Participation._meta.db_table} SET last_seen_at = %(now)s
            WHERE id = {participation} AND status = 'active'
            RETURNING id
        ), candidate AS (
            SELECT i.id, i.reserved_ab, i.reserved_ba FROM {item} i
            WHERE i.batch_id = %(batch)s AND i.reserved_count < i.target
              AND EXISTS (SELECT 1 FROM seen)
              AND NOT EXISTS (
                  -- "never leased": a repeat needs a first look, so the first looks say it,
                  -- and their unique index answers with one probe per candidate. OFFSET 0
                  -- keeps it a probe: made a join, PostgreSQL reads every lease the
                  -- annotator ever had on each request (a cost growing with their work)
                  -- whenever it estimates that history to be short
                  SELECT 1 FROM {assignment} a
                  WHERE a.item_id = i.id AND a.annotator_id = %(annotator)s
                    AND a.purpose <> 'repeat'
                  OFFSET 0
              )
            ORDER BY i.reserved_count DESC, i.counted_count DESC, i.position ASC
            LIMIT 1
            FOR UPDATE OF i SKIP LOCKED
        ), chosen AS (
            SELECT c.id, {order_sql} AS shown_order FROM candidate c
        ), taken AS (
            UPDATE {item} i SET
                reserved_count = i.reserved_count + 1,
                reserved_ab = i.reserved_ab + (CASE WHEN ch.shown_order = 'ab' THEN 1 ELSE 0 END),
                reserved_ba = i.reserved_ba + (CASE WHEN ch.shown_order = 'ba' THEN 1 ELSE 0 END)
            FROM chosen ch
            WHERE i.id = ch.id AND i.reserved_count < i.target
              AND (ch.shown_order <> 'ab' OR i.reserved_ab < (i.target + 1) / 2)
              AND (ch.shown_order <> 'ba' OR i.reserved_ba < (i.target + 1) / 2)
            RETURNING i.id, ch.shown_order
        ), leased AS (
            INSERT INTO {assignment}
                (id, batch_id, item_id, annotator_id, state, purpose, shown_order,
                 leased_at, expires_at, submitted_at)
            SELECT %(assignment)s, %(batch)s, t.id, %(annotator)s, 'open', 'regular',
                   t.shown_order, %(now)s, %(expires)s, NULL
            FROM taken t
            RETURNING item_id, shown_order
        )"""


@lru_cache(maxsize=16)
def _count_label_statement(
    vendor: str, columns: tuple[str, ...], shown_ba: tuple[str, ...], guarded: bool
) -> str:
    """The text of ``count_label_in_one_statement``'s statement for a label with these
    columns, built once per process: the hot path only binds parameters."""
    item = Item._meta.db_table
    assignment = Assignment._meta.db_table
    participation = Participation._meta.db_table
    label_table = Label._meta.db_table
    values = []
    for column in columns:
        value = sql.typed_parameter(Label, column, f"label_{column}")
        if column in shown_ba:
            value_ba = sql.typed_parameter(Label, column, f"label_ba_{column}")
            value = f"CASE WHEN s.shown_order = 'ba' THEN {value_ba} ELSE {value} END"
        values.append(value)
    guard = (
        f"""JOIN {Batch._meta.db_table} b ON b.id = p.batch_id
            WHERE b.id = %(batch)s AND b.xmin::text = %(batch_version)s
              AND (p.browser_key = '' OR p.browser_key = ANY(%(browser_keys)s)) AND"""
        if guarded
        else "WHERE"
    )
    return f"""
        WITH member AS (
            SELECT p.id FROM {participation} p
            JOIN {assignment} held ON held.batch_id = p.batch_id
            {guard} held.id = %(assignment)s AND p.annotator_id = %(annotator)s
              AND p.status <> 'excluded'
            FOR NO KEY UPDATE OF p
        ), submitted AS (
            UPDATE {assignment} a SET state = 'submitted', submitted_at = %(now)s
            WHERE a.id = %(assignment)s AND a.annotator_id = %(annotator)s
              AND a.state = 'open' AND a.purpose = 'regular'
              AND EXISTS (SELECT 1 FROM member)
            RETURNING a.id, a.batch_id, a.item_id, a.shown_order, a.position_in_bundle
        ), counted AS (
            UPDATE {item} i SET counted_count = i.counted_count + 1
            FROM submitted s WHERE i.id = s.item_id
            RETURNING i.id
        ), tallied AS (
            UPDATE {participation} p SET regular_labels = p.regular_labels + 1
            FROM member m, submitted s
            WHERE p.id = m.id
        )
        INSERT INTO {label_table}
            (assignment_id, batch_id, item_id, annotator_id, status, shown_order,
             position_in_bundle, submitted_at, {", ".join(columns)})
        SELECT s.id, s.batch_id, s.item_id, %(annotator)s, 'counted', s.shown_order,
               s.position_in_bundle, %(now)s,
               {", ".join(values)}
        FROM submitted s JOIN counted c ON c.id = s.item_id
        RETURNING id, item_id, shown_order, position_in_bundle
    """


def release_slots(slots: Iterable[Slot]) -> int:
    """Give back one reserved slot per entry (an expired or withdrawn open lease).

    The caller holds the row locks of the leases it releases and marks them expired in
    the same transaction. Returns how many slots were given back.
    """
    released = 0
    for (item_pk, order), count in sorted(Counter(slots).items()):
        Item.objects.filter(pk=item_pk).update(
            reserved_count=F("reserved_count") - count, **_with_order(order, -count)
        )
        released += count
    return released


def count_reserved(item_pk: int) -> None:
    """An open lease's label is stored: its reserved slot becomes counted."""
    Item.objects.filter(pk=item_pk).update(counted_count=F("counted_count") + 1)


def count_if_room(item_pk: int, order: str = "") -> bool:
    """Count a label that holds no reserved slot (a late answer, a re-included label).

    It counts only if the item still has a free slot — and, for a pair, a free slot of
    the order it was shown in; otherwise the caller stores it as ``surplus``. This is the
    one place the rules "never N + 1" and "balanced orders" apply to such labels.
    """
    return bool(
        Item.objects.filter(
            _order_has_room(order), pk=item_pk, reserved_count__lt=F("target")
        ).update(
            reserved_count=F("reserved_count") + 1,
            counted_count=F("counted_count") + 1,
            **_with_order(order, 1),
        )
    )


def uncount(slots: Iterable[Slot]) -> int:
    """Counted labels stop counting (their annotator was excluded): the slots reopen.

    The caller holds the locks of the labels whose status it changes.
    """
    reopened = 0
    for (item_pk, order), labels in sorted(Counter(slots).items()):
        Item.objects.filter(pk=item_pk).update(
            counted_count=F("counted_count") - labels,
            reserved_count=F("reserved_count") - labels,
            **_with_order(order, -labels),
        )
        reopened += labels
    return reopened


def change_target(batch: Batch, annotations_per_item: int) -> None:
    """Set N on every item of the batch; never below what an item already holds.

    The caller holds the batch row's lock and saves ``batch.annotations_per_item``.
    """
    regular = batch.items.filter(is_check=False)
    held = regular.aggregate(
        most=Max("reserved_count"), ab=Max("reserved_ab"), ba=Max("reserved_ba")
    )
    most = held["most"] or 0
    if annotations_per_item < most:
        raise Conflict(
            f"annotations_per_item: an item already holds {most} labels or leases; "
            f"N cannot go below {most}"
        )
    one_order = max(held["ab"] or 0, held["ba"] or 0)
    if order_capacity(annotations_per_item) < one_order:
        lowest = 2 * one_order - 1
        raise Conflict(
            f"annotations_per_item: a pair was already shown in one order to {one_order} "
            f"annotators; to stay balanced N cannot go below {lowest}"
        )
    regular.update(target=annotations_per_item)
