"""Handing out items: exactly N per item, nobody twice on the same item.

``lease_next_item`` gives the annotator the open item closest to completion (so no item
lingers at N−1 while fresh ones are started), never one they labelled or were leased
before, never one whose counted labels + open leases already reach N.

Concurrency: candidates are read with ``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so many
annotators lease different items in parallel without waiting on each other; the slot is
then taken by a conditional ``UPDATE ... WHERE reserved_count < target`` (``slots``). One
annotator's own concurrent requests (two tabs, a retried request) are serialised on
their participation row. On SQLite the transaction holds the database write lock.

Expiry needs no background process: every lease call first gives back the slots of this
batch's expired leases (``expire_leases``); a periodic task may call it too.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.db import transaction
from django.db.models import F
from django.utils import timezone

from annotation.models import (
    Assignment,
    AssignmentState,
    Batch,
    BatchState,
    Item,
    Label,
    Participation,
)
from annotation.services import slots
from core.errors import NotFound, Unavailable
from core.locking import lock_rows

EXPIRY_CHUNK = 1000
CANDIDATE_ATTEMPTS = 20


class NoWorkReason:
    DRAINED = "drained"  # every item has its N labels or open leases
    ALL_SEEN = "nothing_left_for_you"  # what remains, this annotator already labelled
    QUOTA = "quota_reached"
    EXCLUDED = "excluded"


@dataclass(frozen=True)
class LeaseOutcome:
    assignment: Assignment | None
    reason: str
    done: int
    quota: int | None


def lease_next_item(
    batch: Batch, participation: Participation, now: datetime | None = None
) -> LeaseOutcome:
    """The annotator's current lease in this batch, or a new one, or why there is none."""
    now = now or timezone.now()
    if batch.state != BatchState.LIVE:
        raise Unavailable(batch.state, f"This batch is {batch.state}; it hands out no work.")
    expire_leases(batch=batch, now=now)
    quota = batch.quota_per_annotator
    held = _current_lease_without_locking(batch, participation, now)
    if held is not None:  # a repeated call (reload, second tab) needs no write lock
        return held
    while True:
        with transaction.atomic():
            participation = _lock_participation(participation)
            annotator_id = participation.annotator_id
            done = Label.objects.filter(batch=batch, annotator_id=annotator_id).count()
            if participation.status == Participation.Status.EXCLUDED:
                return LeaseOutcome(None, NoWorkReason.EXCLUDED, done, quota)
            current = lock_rows(
                Assignment.objects.filter(
                    batch=batch, annotator_id=annotator_id, state=AssignmentState.OPEN
                )
            ).first()
            if current is not None:
                if current.expires_at > now:
                    return LeaseOutcome(current, "", done, quota)
                # Give the slot back and commit before locking any other item: holding
                # this item's lock while waiting for another's could deadlock with an
                # annotator doing the same the other way round.
                release_leases([(current.pk, current.item_id)])
                continue
            if quota is not None and done >= quota:
                return LeaseOutcome(None, NoWorkReason.QUOTA, done, quota)
            assignment = _take_slot(batch, annotator_id, now)
            if assignment is not None:
                participation.save(update_fields=["last_seen_at"])
                return LeaseOutcome(assignment, "", done, quota)
        break
    reason = NoWorkReason.ALL_SEEN if _batch_has_room(batch) else NoWorkReason.DRAINED
    return LeaseOutcome(None, reason, done, quota)


def expire_leases(batch: Batch | None = None, now: datetime | None = None) -> int:
    """Give back the slots of open leases past their expiry; returns how many expired.

    Leases being submitted at this moment are locked by the submitter and skipped: the
    submission wins, and the lease is not expired under it.
    """
    now = now or timezone.now()
    stale = Assignment.objects.filter(state=AssignmentState.OPEN, expires_at__lte=now)
    if batch is not None:
        stale = stale.filter(batch=batch)
    if not stale.exists():  # the common case, without taking any lock
        return 0
    total = 0
    while True:
        with transaction.atomic():
            rows = list(
                lock_rows(stale.order_by("pk"), skip_locked=True).values_list("pk", "item_id")[
                    :EXPIRY_CHUNK
                ]
            )
            if rows:
                total += release_leases(rows)
        if len(rows) < EXPIRY_CHUNK:
            return total


def release_leases(rows: list[tuple]) -> int:
    """Mark open leases expired and give their slots back; caller holds their row locks.

    ``rows`` are (assignment pk, item pk) pairs. Returns how many leases expired.
    """
    expired = Assignment.objects.filter(
        pk__in=[pk for pk, _ in rows], state=AssignmentState.OPEN
    ).update(state=AssignmentState.EXPIRED)
    if expired != len(rows):  # a lease was submitted meanwhile; recount what really expired
        still = Assignment.objects.filter(
            pk__in=[pk for pk, _ in rows], state=AssignmentState.EXPIRED
        )
        rows = list(still.values_list("pk", "item_id"))
    return slots.release_slots(item_id for _, item_id in rows)


def _current_lease_without_locking(
    batch: Batch, participation: Participation, now: datetime
) -> LeaseOutcome | None:
    """The annotator's unexpired open lease, read without a transaction.

    Handing it out again changes nothing, so it needs no lock; on SQLite this keeps
    page reloads from queueing for the database's single write lock.
    """
    current = Assignment.objects.filter(
        batch=batch,
        annotator_id=participation.annotator_id,
        state=AssignmentState.OPEN,
        expires_at__gt=now,
    ).first()
    if current is None:
        return None
    if Participation.objects.filter(
        pk=participation.pk, status=Participation.Status.EXCLUDED
    ).exists():
        return None  # the locked path reports the exclusion
    done = Label.objects.filter(batch=batch, annotator_id=participation.annotator_id).count()
    return LeaseOutcome(current, "", done, batch.quota_per_annotator)


def _lock_participation(participation: Participation) -> Participation:
    try:
        return lock_rows(Participation.objects.filter(pk=participation.pk)).get()
    except Participation.DoesNotExist as missing:
        raise NotFound("This annotator has not entered the batch.") from missing


def _take_slot(batch: Batch, annotator_id: int, now: datetime) -> Assignment | None:
    skipped: list[int] = []
    for _ in range(CANDIDATE_ATTEMPTS):
        candidates = (
            Item.objects.filter(batch=batch, reserved_count__lt=F("target"))
            .exclude(assignments__annotator_id=annotator_id)
            .exclude(pk__in=skipped)
            .order_by("-reserved_count", "-counted_count", "position")
            .values_list("pk", flat=True)
        )
        item_pk = lock_rows(candidates, skip_locked=True).first()
        if item_pk is None:
            # Every candidate may be locked by other annotators' transactions for a
            # moment; wait for the best one rather than telling this annotator "done".
            item_pk = lock_rows(candidates).first()
        if item_pk is None:
            return None
        if slots.take_slot(item_pk):
            return Assignment.objects.create(
                batch=batch,
                item_id=item_pk,
                annotator_id=annotator_id,
                leased_at=now,
                expires_at=now + timedelta(seconds=batch.lease_seconds),
            )
        skipped.append(item_pk)
    return None


def _batch_has_room(batch: Batch) -> bool:
    return Item.objects.filter(batch=batch, reserved_count__lt=F("target")).exists()
