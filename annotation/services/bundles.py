"""Bundles: the alternatives of one query (or of one metadata value) rated together by
one participant, as the Infinity-Chat study did (docs/SPEC.md, "Bundles").

* ``bundle_of`` — the bundle an item belongs to under the batch's ``bundle_by``
  (``none``, ``query``, ``meta:KEY``); attention checks belong to none (they are shown
  between bundles, never inside one), and an item without the metadata key is a bundle
  of its own. Stored on ``Item.bundle`` at import, and again for every item when
  ``bundle_by`` changes (``assign_bundles``; refused once the batch holds labels);
* ``take_bundle`` — a participant who asks for work is given a whole bundle they never
  touched, closest to completion first, among the bundles where *every* unfinished item
  still has a free slot: one slot of each unfinished item, all in one transaction (all
  or none), so two participants never split a bundle's last slots. A bundle whose other
  items are already complete is given as its remaining items (``partial``). The
  positions follow ``bundle_order``: ``random`` (shuffled per participant), ``balanced``
  (a cyclic Latin square over the bundle's N participants; the cells a participant who
  left did not answer are given out again, so a later one may get part of a set) or
  ``imported`` (file order); a partial set keeps its items' places in the participant's
  ordering of the whole bundle;
* ``bundle_progress`` — where a lease stands in its bundle, for the rating page.

The counters are still moved only by ``slots`` (one ``take_slot`` per item), so exactly
N per item holds as for single items.
"""

import random
from collections import Counter
from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np
from django.db import transaction
from django.db.models import Count, F, Min, Q, Sum
from scipy.optimize import linear_sum_assignment

from annotation.models import Assignment, AssignmentState, Batch, Item, Label, Purpose
from annotation.services import slots
from core.errors import Conflict
from core.locking import lock_rows

NOT_BUNDLED = "none"
ORDERS = ("random", "balanced", "imported")
META_PREFIX = "meta:"
# bundles tried per request before the participant is told to ask again
BUNDLE_ATTEMPTS = 10


def is_bundled(batch: Batch) -> bool:
    return (batch.bundle_by or NOT_BUNDLED) != NOT_BUNDLED


def bundle_of(bundle_by: str, *, query_id: str, item_id: str, metadata: dict, is_check: bool):
    """The bundle key of an item (``""``: not in a bundle)."""
    if is_check or (bundle_by or NOT_BUNDLED) == NOT_BUNDLED:
        return ""
    if bundle_by == "query":
        return f"query:{query_id}"[:200]
    key = bundle_by.removeprefix(META_PREFIX)
    value = (metadata or {}).get(key)
    if value is None or value == "":
        return f"item:{item_id}"[:200]  # no value: a bundle of its own
    return f"{key}:{value}"[:200]


def assign_bundles(batch: Batch) -> int:
    """Set every item's bundle from the batch's ``bundle_by`` (after it changed)."""
    if Label.objects.filter(batch=batch).exists():
        raise Conflict("bundle_by: the batch holds labels; its bundles can no longer change")
    items = list(
        Item.objects.filter(batch=batch).values_list(
            "pk", "item_id", "query__query_id", "metadata", "is_check", "bundle"
        )
    )
    changed = []
    for pk, item_id, query_id, metadata, is_check, current in items:
        key = bundle_of(
            batch.bundle_by,
            query_id=query_id,
            item_id=item_id,
            metadata=metadata,
            is_check=is_check,
        )
        if key != current:
            changed.append(Item(pk=pk, bundle=key))
    Item.objects.bulk_update(changed, ["bundle"], batch_size=1000)
    return len(changed)


def touched_bundles(batch: Batch, annotator_id: int):
    """The bundles of every item this annotator was ever leased in the batch."""
    return (
        Assignment.objects.filter(batch=batch, annotator_id=annotator_id)
        .exclude(item__bundle="")
        .values("item__bundle")
    )


def bundles_taken(batch: Batch, annotator_id: int) -> int:
    return (
        Assignment.objects.filter(batch=batch, annotator_id=annotator_id, purpose=Purpose.REGULAR)
        .values("item__bundle")
        .distinct()
        .count()
    )


def _takeable(batch: Batch, annotator_id: int):
    """Per bundle this annotator may take now: never touched, at least one unfinished
    item, and no unfinished item without a free slot (a bundle is leased whole)."""
    unfinished = Q(counted_count__lt=F("target"))
    return (
        Item.objects.filter(batch=batch, is_check=False)
        .exclude(bundle="")
        .exclude(bundle__in=touched_bundles(batch, annotator_id))
        .values("bundle")
        .annotate(
            unfinished=Count("pk", filter=unfinished),
            blocked=Count("pk", filter=unfinished & Q(reserved_count__gte=F("target"))),
            reserved=Sum("reserved_count"),
            first=Min("position"),
        )
        .filter(unfinished__gt=0, blocked=0)
    )


def takeable_bundles(batch: Batch, annotator_id: int):
    """The keys of the bundles this annotator could be leased now (``take_bundle``'s
    rule, for the entry page's decision: ``admission.takeable_items``)."""
    return _takeable(batch, annotator_id).order_by().values_list("bundle", flat=True)


def _candidates(batch: Batch, annotator_id: int):
    """``takeable_bundles``, closest to completion first."""
    return (
        _takeable(batch, annotator_id)
        .order_by("-reserved", "first")
        .values_list("bundle", flat=True)
    )


class _Taken(Exception):
    """A slot of the bundle went to someone else meanwhile: undo this bundle's leases."""


def take_bundle(batch: Batch, annotator_id: int, now: datetime) -> Assignment | None:
    """Lease a whole bundle to the annotator (the caller holds their participation's
    lock, inside a transaction); returns the lease shown first, or ``None`` when no bundle
    can be had now."""
    tried: list[str] = []
    for _ in range(BUNDLE_ATTEMPTS):
        key = _candidates(batch, annotator_id).exclude(bundle__in=tried).first()
        if key is None:
            return None
        tried.append(key)
        try:
            with transaction.atomic():
                return _lease_bundle(batch, annotator_id, key, now)
        except _Taken:
            continue
    return None


def _lease_bundle(batch: Batch, annotator_id: int, key: str, now: datetime) -> Assignment:
    # the items are locked in primary-key order, as every writer of several items does
    items = list(
        lock_rows(
            Item.objects.filter(
                batch=batch, is_check=False, bundle=key, counted_count__lt=F("target")
            ).order_by("pk")
        ).values_list("pk", "position", "reserved_count", "target", "reserved_ab", "reserved_ba")
    )
    if not items or any(reserved >= target for _, _, reserved, target, _, _ in items):
        raise _Taken
    whole = list(
        Item.objects.filter(batch=batch, is_check=False, bundle=key)
        .order_by("position", "pk")
        .values_list("pk", flat=True)
    )
    positions = _positions(batch, whole, {row[0] for row in items})
    if not positions:
        raise _Taken
    comparison = bool(batch.task_kind.comparison)
    expires_at = now + timedelta(seconds=batch.lease_seconds)
    leases = []
    for pk, _, _, _, reserved_ab, reserved_ba in items:
        if pk not in positions:
            continue  # balanced: the design needs no label of this item from them
        order = slots.choose_order(reserved_ab, reserved_ba) if comparison else ""
        if not slots.take_slot(pk, order):
            raise _Taken
        leases.append(
            Assignment(
                batch=batch,
                item_id=pk,
                annotator_id=annotator_id,
                purpose=Purpose.REGULAR,
                shown_order=order,
                position_in_bundle=positions[pk],
                leased_at=now,
                expires_at=expires_at,
            )
        )
    Assignment.objects.bulk_create(leases)
    return min(leases, key=lambda lease: lease.position_in_bundle)


def _positions(batch: Batch, whole: list[int], remaining: set[int]) -> dict[int, int]:
    """Item pk -> position (0 first) of the items this participant is given, in their
    ordering of the ``whole`` bundle (its items in import order) by the batch's bundle
    order; ``random`` and ``imported`` give every ``remaining`` item, and a partial set
    keeps the places its items have in that ordering (the places of complete items are
    skipped). ``balanced`` gives the cells of the bundle's design still needed
    (``balanced_places``), which may be fewer than the remaining items."""
    order = batch.bundle_order or "random"
    size = len(whole)
    if order == "imported":
        places = dict(zip(whole, range(size), strict=True))
    elif order == "random":
        places = dict(zip(whole, random.sample(range(size), size), strict=True))
    else:
        filled = Counter(
            Assignment.objects.filter(
                item_id__in=whole, purpose=Purpose.REGULAR, state=AssignmentState.OPEN
            )
            .exclude(position_in_bundle=None)
            .values_list("item_id", "position_in_bundle")
        ) + Counter(
            Label.objects.filter(item_id__in=whole, status="counted")
            .exclude(position_in_bundle=None)
            .values_list("item_id", "position_in_bundle")
        )
        return balanced_places(whole, sorted(remaining), filled, batch.annotations_per_item)
    return {pk: places[pk] for pk in remaining}


def design_target(index: int, place: int, size: int, n: int) -> int:
    """How many of an item's N labels the balanced design puts at a place: N / size,
    the remainder spread so that every place has as many extra cells as every item
    (the item at import index ``index``; a cyclic Latin square)."""
    base, extra = divmod(n, size)
    return base + (1 if (place - index) % size < extra else 0)


def balanced_places(
    whole: list[int], remaining: list[int], filled: Counter, n: int
) -> dict[int, int]:
    """The cells (item -> place) of the bundle's balanced design this participant fills:
    each item's N labels are spread over the bundle's places as evenly as possible
    (``design_target``), ``filled`` holds the cells taken so far (open leases and counted
    labels), and the participant is given, at distinct places, the remaining items
    whose design still needs a label at some free place — the most such cells, found
    exactly as an assignment problem (``scipy.optimize.linear_sum_assignment``). A
    participant who left mid-bundle thus has exactly their unanswered cells given out
    again, and every item ends with each place's share (differing by at most one when N
    is a multiple of the bundle's size)."""
    size = len(whole)
    index = {pk: number for number, pk in enumerate(whole)}
    demand = np.array(
        [
            [
                design_target(index[pk], place, size, n) - filled[(pk, place)]
                for place in range(size)
            ]
            for pk in remaining
        ],
        dtype=float,
    )
    # a cell with demand costs nothing, one without costs one; among the cells with
    # demand, the larger demand first, then the cyclic order of the import
    costs = np.where(demand > 0, 0.0, 1.0) - 1e-3 * np.clip(demand, 0, None)
    for row, pk in enumerate(remaining):
        for place in range(size):
            costs[row, place] += ((place - index[pk]) % size) * 1e-6
    rows, places = linear_sum_assignment(costs)
    return {
        remaining[row]: int(place)
        for row, place in zip(rows, places, strict=True)
        if demand[row, place] > 0
    }


@dataclass(frozen=True)
class BundleProgress:
    """Where a lease stands in its bundle: ``position`` of ``size`` (from 1), and whether
    the participant was given only the bundle's remaining items (``partial``)."""

    position: int
    size: int
    partial: bool


def bundle_progress(assignment: Assignment) -> BundleProgress | None:
    """For the rating page; ``None`` for a lease outside a bundle."""
    if assignment.position_in_bundle is None:
        return None
    key = Item.objects.filter(pk=assignment.item_id).values_list("bundle", flat=True).first()
    places = list(
        Assignment.objects.filter(
            batch_id=assignment.batch_id,
            annotator_id=assignment.annotator_id,
            purpose=Purpose.REGULAR,
            item__bundle=key,
            leased_at=assignment.leased_at,
        ).values_list("position_in_bundle", flat=True)
    )
    whole = Item.objects.filter(batch_id=assignment.batch_id, bundle=key, is_check=False).count()
    before = sum(place < assignment.position_in_bundle for place in places)
    return BundleProgress(before + 1, len(places), len(places) < whole)
