"""Handing out items: exactly N per item, nobody twice on the same item.

``lease_next_item`` gives the annotator, in this order of precedence:

1. their own unexpired lease, if they hold one (a reload, a second tab);
2. an attention check or a repeat of an earlier item, when one is due
   (``annotation.services.quality``) — neither holds a slot of any item's N;
3. the regular item closest to completion (so no item lingers at N−1 while fresh ones
   are started), never one they labelled or were leased before, never one whose counted
   labels + open leases already reach N. A pair is shown in the order that keeps the
   item balanced (``slots.choose_order``);

or says why there is none: excluded, quota reached, the batch's cap on concurrent
workers reached (``busy``), the remaining slots all held by other workers' leases
(``wait``: try again shortly), nothing left this annotator may label, or every item
complete (``drained``).

Concurrency: candidates are read with ``FOR UPDATE SKIP LOCKED`` on PostgreSQL, so many
annotators lease different items in parallel without waiting on each other; the slot is
then taken by a conditional ``UPDATE ... WHERE reserved_count < target`` (``slots``). One
annotator's own concurrent requests (two tabs, a retried request) are serialised on
their participation row. On SQLite the transaction holds the database write lock.

Expiry needs no background process: every lease call first gives back the slots of this
batch's expired leases (``expire_leases``); a periodic task may call it too. While the
rating page is visible it extends its lease (``extend_lease``, the heartbeat) up to the
batch's cap, so a short lease recycles abandoned slots without cutting off careful readers.
"""

from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from django.db import transaction
from django.db.models import F, Min
from django.utils import timezone

from annotation.models import (
    REGULAR_STATUSES,
    Annotator,
    Assignment,
    AssignmentState,
    Batch,
    BatchState,
    Item,
    Label,
    Participation,
    Purpose,
)
from annotation.services import admission, quality, slots
from annotation.services.leases import new_lease
from core.errors import Conflict, NotFound, Unavailable
from core.locking import lock_rows

EXPIRY_CHUNK = 1000
CANDIDATE_ATTEMPTS = 20
# how soon a worker told "wait" (or "busy") asks again, in seconds
WAIT_RETRY_BOUNDS = (5, 60)
BUSY_RETRY_SECONDS = 60


class NoWorkReason:
    DRAINED = "drained"  # every item has its N counted labels
    WAIT = "wait"  # the remaining slots are held by other workers' leases: try again soon
    BUSY = "busy"  # the batch's cap on concurrent workers is reached: try again later
    ALL_SEEN = "nothing_left_for_you"  # what remains, this annotator already labelled
    QUOTA = "quota_reached"
    EXCLUDED = "excluded"


@dataclass(frozen=True)
class LeaseOutcome:
    assignment: Assignment | None
    reason: str
    done: int  # the annotator's labels of regular items in this batch
    quota: int | None
    retry_after: int | None = None


def lease_next_item(
    batch: Batch, participation: Participation, now: datetime | None = None
) -> LeaseOutcome:
    """The annotator's current lease in this batch, or a new one, or why there is none.

    Raises ``Unavailable`` when the batch hands out no work, or when the annotator has
    not yet consented or answered the batch's questionnaire (``admission.require_ready``).
    """
    now = now or timezone.now()
    if batch.state != BatchState.LIVE:
        raise Unavailable(batch.state, f"This batch is {batch.state}; it hands out no work.")
    admission.require_ready(batch, participation)
    expire_leases(batch=batch, now=now)
    quota = batch.quota_per_annotator
    held = _current_lease_without_locking(batch, participation, now)
    if held is not None:  # a repeated call (reload, second tab) needs no write lock
        return held
    while True:
        with transaction.atomic():
            participation = _lock_participation(participation)
            annotator_id = participation.annotator_id
            done = regular_done(batch, annotator_id)
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
                release_leases([_lease_row(current)])
                continue
            if quota is not None and done >= quota:
                return LeaseOutcome(None, NoWorkReason.QUOTA, done, quota)
            if admission.at_capacity(batch, now):
                return LeaseOutcome(None, NoWorkReason.BUSY, done, quota, BUSY_RETRY_SECONDS)
            assignment = quality.due_extra(
                batch,
                participation,
                done,
                now,
                has_regular_work=partial(_has_regular_work, batch, annotator_id),
            )
            if assignment is None:
                assignment = _take_slot(batch, annotator_id, now)
            if assignment is not None:
                participation.save(update_fields=["last_seen_at"])
                return LeaseOutcome(assignment, "", done, quota)
        break
    reason, retry_after = _why_no_work(batch, annotator_id, now)
    return LeaseOutcome(None, reason, done, quota, retry_after)


def regular_done(batch: Batch, annotator_id: int) -> int:
    """The annotator's labels of regular items (what quotas and progress count)."""
    return Label.objects.filter(
        batch=batch, annotator_id=annotator_id, status__in=REGULAR_STATUSES
    ).count()


def extend_lease(annotator: Annotator, assignment_id, now: datetime | None = None) -> Assignment:
    """The heartbeat: push an open lease's expiry to ``now + lease time``, capped at
    ``leased_at + batch.lease_cap_seconds``.

    Never revives anything: an expired or submitted lease, or one whose annotator was
    excluded, is a ``Conflict`` (the page then carries on; a submission is still judged
    by the usual rules). Someone else's lease is ``NotFound``, like a missing one.
    """
    now = now or timezone.now()
    with transaction.atomic():
        assignment = (
            lock_rows(Assignment.objects.filter(pk=assignment_id, annotator=annotator))
            .select_related("batch")
            .first()
        )
        if assignment is None:
            raise NotFound("No such assignment.")
        if assignment.state != AssignmentState.OPEN or assignment.expires_at <= now:
            raise Conflict("assignment: this lease is no longer open; it cannot be extended")
        excluded = Participation.objects.filter(
            batch_id=assignment.batch_id,
            annotator=annotator,
            status=Participation.Status.EXCLUDED,
        ).exists()
        if excluded:
            raise Conflict("assignment: you no longer take part in this batch")
        batch = assignment.batch
        cap = assignment.leased_at + timedelta(seconds=batch.lease_cap_seconds)
        extended = min(now + timedelta(seconds=batch.lease_seconds), cap)
        if extended > assignment.expires_at:
            assignment.expires_at = extended
            assignment.save(update_fields=["expires_at"])
    return assignment


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
                lock_rows(stale.order_by("pk"), skip_locked=True).values_list(*LEASE_FIELDS)[
                    :EXPIRY_CHUNK
                ]
            )
            if rows:
                total += release_leases(rows)
        if len(rows) < EXPIRY_CHUNK:
            return total


LEASE_FIELDS = ("pk", "item_id", "purpose", "shown_order")


def _lease_row(assignment: Assignment) -> tuple:
    return tuple(getattr(assignment, field) for field in LEASE_FIELDS)


def release_leases(rows: list[tuple]) -> int:
    """Mark open leases expired and give their slots back; caller holds their row locks.

    ``rows`` are (assignment pk, item pk, purpose, shown order) as ``LEASE_FIELDS``.
    Only regular leases hold a slot. Returns how many leases expired.
    """
    expired = Assignment.objects.filter(
        pk__in=[row[0] for row in rows], state=AssignmentState.OPEN
    ).update(state=AssignmentState.EXPIRED)
    if expired != len(rows):  # a lease was submitted meanwhile; recount what really expired
        still = Assignment.objects.filter(
            pk__in=[row[0] for row in rows], state=AssignmentState.EXPIRED
        )
        rows = list(still.values_list(*LEASE_FIELDS))
    slots.release_slots(
        (item_pk, order) for _, item_pk, purpose, order in rows if purpose == Purpose.REGULAR
    )
    return len(rows)


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
    done = regular_done(batch, participation.annotator_id)
    return LeaseOutcome(current, "", done, batch.quota_per_annotator)


def _lock_participation(participation: Participation) -> Participation:
    try:
        return lock_rows(Participation.objects.filter(pk=participation.pk)).get()
    except Participation.DoesNotExist as missing:
        raise NotFound("This annotator has not entered the batch.") from missing


def _open_items(batch: Batch, annotator_id: int):
    """Regular items with a free slot that this annotator has never been leased."""
    return Item.objects.filter(batch=batch, reserved_count__lt=F("target")).exclude(
        assignments__annotator_id=annotator_id
    )


def _has_regular_work(batch: Batch, annotator_id: int) -> bool:
    return _open_items(batch, annotator_id).exists()


def _take_slot(batch: Batch, annotator_id: int, now: datetime) -> Assignment | None:
    ordered = bool(batch.task_kind.comparison)
    skipped: list[int] = []
    for _ in range(CANDIDATE_ATTEMPTS):
        candidates = (
            _open_items(batch, annotator_id)
            .exclude(pk__in=skipped)
            .order_by("-reserved_count", "-counted_count", "position")
            .values_list("pk", "reserved_ab", "reserved_ba")
        )
        found = lock_rows(candidates, skip_locked=True).first()
        if found is None:
            # Every candidate may be locked by other annotators' transactions for a
            # moment; wait for the best one rather than telling this annotator "done".
            found = lock_rows(candidates).first()
        if found is None:
            return None
        item_pk, reserved_ab, reserved_ba = found
        order = slots.choose_order(reserved_ab, reserved_ba) if ordered else ""
        if slots.take_slot(item_pk, order):
            return new_lease(batch, annotator_id, item_pk, now, shown_order=order)
        skipped.append(item_pk)
    return None


def _why_no_work(batch: Batch, annotator_id: int, now: datetime) -> tuple[str, int | None]:
    regular = Item.objects.filter(batch=batch, is_check=False)
    if regular.filter(reserved_count__lt=F("target")).exists():
        return NoWorkReason.ALL_SEEN, None
    unfinished = regular.filter(counted_count__lt=F("target"))
    waiting_on = unfinished.exclude(assignments__annotator_id=annotator_id)
    if waiting_on.exists():
        # the slots this annotator could take are held by leases that may expire
        soonest = Assignment.objects.filter(
            item__in=waiting_on, state=AssignmentState.OPEN
        ).aggregate(soonest=Min("expires_at"))["soonest"]
        seconds = (soonest - now).total_seconds() if soonest else WAIT_RETRY_BOUNDS[0]
        low, high = WAIT_RETRY_BOUNDS
        return NoWorkReason.WAIT, int(min(max(seconds, low), high))
    if unfinished.exists():
        return NoWorkReason.ALL_SEEN, None
    return NoWorkReason.DRAINED, None
