"""The exactly-N counters: the only code that changes an item's ``reserved_count``,
``counted_count`` and ``target``.

Each item holds N (``target``, the batch's ``annotations_per_item``) slots. A slot is
*reserved* while a lease holds it or a counted label fills it, and *counted* once the
label is stored. The database keeps ``0 <= counted_count <= reserved_count <= target``
with check constraints, and every change below is a single conditional ``UPDATE`` on the
item row, so that even a bug elsewhere cannot push an item over N.

Locking: callers run these inside ``transaction.atomic()``. Changes to several items are
applied in ascending item order, so two transactions never wait on each other in a cycle.
The rows that decide *whether* to change a counter (the lease being submitted, the
participation being excluded) are locked by the caller before calling, as each function
says.

A test (``tests/annotation/test_slots.py``) fails if any other module writes these fields.
"""

from collections import Counter
from collections.abc import Iterable

from django.db.models import F, Max

from annotation.models import Batch, Item
from core.errors import Conflict

# Columns and values of a new item's counters (the importer's multi-row INSERT).
NEW_ITEM_COUNTER_COLUMNS = ("target", "reserved_count", "counted_count")


def new_item_counters(batch: Batch) -> tuple[int, int, int]:
    """(target, reserved, counted) of an item imported into ``batch``: N free slots."""
    return batch.annotations_per_item, 0, 0


def take_slot(item_pk: int) -> bool:
    """Reserve one slot for a new lease, if the item has one free.

    The caller has read ``item_pk`` as a candidate (locked with ``FOR UPDATE SKIP
    LOCKED`` on PostgreSQL); the condition is checked again by the ``UPDATE`` itself.
    """
    return bool(
        Item.objects.filter(pk=item_pk, reserved_count__lt=F("target")).update(
            reserved_count=F("reserved_count") + 1
        )
    )


def release_slots(item_pks: Iterable[int]) -> int:
    """Give back one reserved slot per entry (an expired or withdrawn open lease).

    The caller holds the row locks of the leases it releases and marks them expired in
    the same transaction. Returns how many slots were given back.
    """
    released = 0
    for item_pk, slots in sorted(Counter(item_pks).items()):
        Item.objects.filter(pk=item_pk).update(reserved_count=F("reserved_count") - slots)
        released += slots
    return released


def count_reserved(item_pk: int) -> None:
    """An open lease's label is stored: its reserved slot becomes counted."""
    Item.objects.filter(pk=item_pk).update(counted_count=F("counted_count") + 1)


def count_if_room(item_pk: int) -> bool:
    """Count a label that holds no reserved slot (a late answer, a re-included label).

    It counts only if the item still has a free slot; otherwise the caller stores it as
    ``surplus``. This is the one place the rule "never N + 1" is applied to such labels.
    """
    return bool(
        Item.objects.filter(pk=item_pk, reserved_count__lt=F("target")).update(
            reserved_count=F("reserved_count") + 1, counted_count=F("counted_count") + 1
        )
    )


def uncount(item_pks: Iterable[int]) -> int:
    """Counted labels stop counting (their annotator was excluded): the slots reopen.

    The caller holds the locks of the labels whose status it changes.
    """
    reopened = 0
    for item_pk, labels in sorted(Counter(item_pks).items()):
        Item.objects.filter(pk=item_pk).update(
            counted_count=F("counted_count") - labels, reserved_count=F("reserved_count") - labels
        )
        reopened += labels
    return reopened


def change_target(batch: Batch, annotations_per_item: int) -> None:
    """Set N on every item of the batch; never below what an item already holds.

    The caller holds the batch row's lock and saves ``batch.annotations_per_item``.
    """
    held = batch.items.aggregate(most=Max("reserved_count"))["most"] or 0
    if annotations_per_item < held:
        raise Conflict(
            f"annotations_per_item: an item already holds {held} labels or leases; "
            f"N cannot go below {held}"
        )
    Item.objects.filter(batch=batch).update(target=annotations_per_item)
