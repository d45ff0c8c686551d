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

Round trips: what the decision needs about the participant is read in one query
(``WorkState``, in ``work_state``; the crowdworker API reads it with the participation and
the batch), and on PostgreSQL a regular lease is then taken in one statement that also
does the locking above (``slots.lease_in_one_statement``). Once a web process knows the
batch (``known_batches``), the crowdworker's request for work is that read and that lease
in a single statement (``lease_for_worker``), which leases only when nothing but a regular
item is due. Anything else — a check or repeat due, a cap on concurrent workers, no
unlocked candidate, SQLite — takes the locked path, which is the reference the
one-statement paths must agree with.

Expiry needs no background process: every lease call first gives back the slots of this
batch's expired leases (``expire_leases``); a periodic task may call it too. While the
rating page is visible it extends its lease (``extend_lease``, the heartbeat) up to the
batch's cap, so a short lease recycles abandoned slots without cutting off careful readers.
Both are a lease's life after it is taken, in ``annotation.services.leases``.
"""

import uuid
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from django.db import IntegrityError, connection, transaction
from django.utils import timezone
from django.utils.translation import gettext_lazy

from annotation.models import (
    Assignment,
    AssignmentState,
    Batch,
    BatchState,
    Participation,
    Purpose,
)
from annotation.services import admission, bundles, known_batches, quality, slots, sql
from annotation.services.leases import (
    LEASE_FIELDS,
    TAKEN_OVER,
    expire_leases,
    extend_lease,
    lease_row,
    new_lease,
    release_leases,
)
from annotation.services.work_state import (
    StateAndLease,
    WorkState,
    lease_with_work_state,
    participation_for_work,
    read_work_state,
)
from core.errors import Conflict, NotFound, Unavailable
from core.locking import lock_rows

# The crowdworker API, the entry and departure services and the tests import a lease's
# life and the work state from here, where leasing began; they live beside it now.
__all__ = [
    "LEASE_FIELDS",
    "LeaseOutcome",
    "NoWorkReason",
    "WorkState",
    "expire_leases",
    "extend_lease",
    "lease_for_worker",
    "lease_next_item",
    "participation_for_work",
    "read_work_state",
    "release_leases",
]

CANDIDATE_ATTEMPTS = 20


class NoWorkReason:
    DRAINED = "drained"  # every item has its N counted labels
    WAIT = "wait"  # the remaining slots are held by other workers' leases: try again soon
    BUSY = "busy"  # the batch's cap on concurrent workers is reached: try again later
    ALL_SEEN = "nothing_left_for_you"  # what remains, this annotator already labelled
    QUOTA = "quota_reached"
    EXCLUDED = "excluded"
    DEPARTED = "departed"  # the platform says they left the study (returned, timed out…)


@dataclass(frozen=True)
class LeaseOutcome:
    assignment: Assignment | None
    reason: str
    done: int  # the annotator's labels of regular items in this batch
    quota: int | None
    retry_after: int | None = None


# how often a participant's page asks again while the batch is paused
PAUSED_RETRY_AFTER_SECONDS = 15

# what the participant's page says when the batch hands out no work (the entry page's words)
NOT_LIVE = {
    BatchState.DRAFT: gettext_lazy("This study has not started yet."),
    BatchState.PAUSED: gettext_lazy("This study is paused at the moment. Please try again later."),
    BatchState.CLOSED: gettext_lazy(
        "This study is closed and accepts no more answers. Thank you for your interest."
    ),
}


def lease_for_worker(
    slug: str, annotator_pk: int, browser_key: str, now: datetime
) -> tuple[Participation, LeaseOutcome] | None:
    """A crowdworker's request for work (the ``next`` call): their participation in the
    batch ``slug`` (its ``batch`` loaded) and ``lease_next_item``'s outcome, or ``None``
    when they have no participation in it. ``browser_key`` is the key the asking browser
    holds for the batch: a participation bound to another browser is refused
    (``Conflict``: another browser took it over).

    On PostgreSQL, when this process knows the batch (``known_batches``) and nothing
    batch-wide is to be decided (live, no cap on concurrent workers, no bundles), the
    participant's state and their regular lease are one statement
    (``work_state.lease_with_work_state``); otherwise, or when it took no lease, the
    state is read and ``lease_next_item`` decides, as for any caller."""
    at_once = _state_and_lease(slug, annotator_pk, browser_key, now)
    if at_once is None:
        found = participation_for_work(slug, annotator_pk, now)
        if found is None:
            return None
        (participation, state), tried = found, False
    else:
        read, assignment = at_once
        participation, state, tried = read.participation, read.state, read.tried
        if assignment is not None:
            quota = participation.batch.quota_per_annotator
            return participation, LeaseOutcome(assignment, "", state.done, quota)
    if participation.browser_key and participation.browser_key != browser_key:
        raise Conflict(str(TAKEN_OVER))
    outcome = lease_next_item(
        participation.batch, participation, now, state=state, one_statement_tried=tried
    )
    return participation, outcome


def _state_and_lease(
    slug: str, annotator_pk: int, browser_key: str, now: datetime
) -> tuple[StateAndLease, Assignment | None] | None:
    if connection.vendor != "postgresql":
        return None
    known = known_batches.known(slug)
    if known is None:
        return None
    batch, version = known
    if batch.state != BatchState.LIVE or not _lease_is_regular_only(batch):
        return None
    assignment_pk = uuid.uuid4()
    expires_at = now + timedelta(seconds=batch.lease_seconds)
    lease = slots.lease_parameters(
        batch_pk=batch.pk,
        annotator_pk=annotator_pk,
        assignment_pk=assignment_pk,
        now=now,
        expires_at=expires_at,
        comparison=bool(batch.task_kind.comparison),
    )
    try:
        # inside a caller's transaction a failed statement must not abort it
        with transaction.atomic() if connection.in_atomic_block else nullcontext():
            read = lease_with_work_state(batch, version, annotator_pk, browser_key, lease)
    except IntegrityError:
        # a concurrent request of the same annotator leased first (the unique constraints
        # refused this one, nothing was written): the reading path hands out that lease
        return None
    if read is None or read.slot is None:
        return (read, None) if read is not None else None
    item_pk, order = read.slot
    assignment = _regular_lease(
        batch, read.participation, assignment_pk, item_pk, order, now=now, expires_at=expires_at
    )
    return read, assignment


def _regular_lease(
    batch: Batch, participation: Participation, assignment_pk, item_pk, order, *, now, expires_at
) -> Assignment:
    """The open regular lease a one-statement lease has just inserted, as an instance."""
    assignment = sql.stored(  # the row exists: the statement inserted it
        Assignment,
        {
            "id": assignment_pk,
            "batch_id": batch.pk,
            "item_id": item_pk,
            "annotator_id": participation.annotator_id,
            "state": AssignmentState.OPEN,
            "purpose": Purpose.REGULAR,
            "shown_order": order,
            "leased_at": now,
            "expires_at": expires_at,
        },
    )
    assignment.batch = batch
    return assignment


def lease_next_item(
    batch: Batch,
    participation: Participation,
    now: datetime | None = None,
    *,
    state: WorkState | None = None,
    one_statement_tried: bool = False,
) -> LeaseOutcome:
    """The annotator's current lease in this batch, or a new one, or why there is none.

    ``state`` is the participant's ``WorkState`` read at ``now`` by the caller in the same
    query as the participation (the crowdworker API does); without it, it is read here.
    ``one_statement_tried``: the caller's statement already tried the one-statement lease
    with this state and found no free candidate (``lease_for_worker``).

    Raises ``Unavailable`` when the batch hands out no work, or when the annotator has
    not yet consented or answered the batch's questionnaire (``admission.require_ready``).

    On PostgreSQL the common case — no check or repeat due, no cap on concurrent workers
    — takes one statement (``slots.lease_in_one_statement``); everything else, and
    SQLite, takes the locked path (``_lease_locked``), which gives the same answers.
    """
    now = now or timezone.now()
    if batch.state != BatchState.LIVE:
        raise Unavailable(
            batch.state,
            str(NOT_LIVE.get(batch.state, NOT_LIVE[BatchState.CLOSED])),
            # a pause passes: the rating page asks again by itself and carries on
            retry_after=PAUSED_RETRY_AFTER_SECONDS if batch.state == BatchState.PAUSED else None,
        )
    if state is None:
        state = read_work_state(participation, now)
    admission.require_ready(
        batch, participation, consented_at=state.consented_at, answered_at=state.answered_at
    )
    if state.stale_leases:
        expire_leases(batch=batch, now=now)
    quota = batch.quota_per_annotator
    excluded = state.status == Participation.Status.EXCLUDED
    if state.held_lease is not None and not excluded:
        # a repeated call (reload, second tab) needs no write lock
        held = Assignment.objects.filter(pk=state.held_lease, state=AssignmentState.OPEN).first()
        if held is not None:
            return LeaseOutcome(held, "", state.done, quota)
    if excluded:
        return LeaseOutcome(None, NoWorkReason.EXCLUDED, state.done, quota)
    if participation.departed_at is not None:
        return LeaseOutcome(None, NoWorkReason.DEPARTED, state.done, quota)
    if quota is not None and state.done >= quota:
        return LeaseOutcome(None, NoWorkReason.QUOTA, state.done, quota)
    if not one_statement_tried and _one_statement_applies(batch, state):
        assignment = _lease_in_one_statement(batch, participation, now)
        if assignment is not None:
            return LeaseOutcome(assignment, "", state.done, quota)
    return _lease_locked(batch, participation, now)


def _one_statement_applies(batch: Batch, state: WorkState) -> bool:
    """Whether this lease can only be a regular item, with nothing else to decide under
    the participant's lock: PostgreSQL, no cap on concurrent workers, and no attention
    check or repeat due (nor their first due point still to be drawn)."""
    if connection.vendor != "postgresql" or not _lease_is_regular_only(batch):
        return False
    return not (
        quality.is_due(batch.check_every, state.next_check_after, state.done)
        or quality.is_due(batch.repeat_every, state.next_repeat_after, state.done)
    )


def _lease_is_regular_only(batch: Batch) -> bool:
    """Whether nothing batch-wide stands between a ready participant and a regular item:
    no cap on concurrent workers, no bundles."""
    return not batch.max_concurrent_annotators and not bundles.is_bundled(batch)


def _lease_in_one_statement(
    batch: Batch, participation: Participation, now: datetime
) -> Assignment | None:
    """A regular lease taken by ``slots.lease_in_one_statement``, or ``None`` when the
    locked path must decide (no unlocked candidate, or a concurrent call of the same
    annotator won: the unique constraints refused this one and nothing was written)."""
    assignment_pk = uuid.uuid4()
    expires_at = now + timedelta(seconds=batch.lease_seconds)
    try:
        # inside a caller's transaction a failed statement must not abort it
        with transaction.atomic() if connection.in_atomic_block else nullcontext():
            taken = slots.lease_in_one_statement(
                batch_pk=batch.pk,
                annotator_pk=participation.annotator_id,
                participation_pk=participation.pk,
                assignment_pk=assignment_pk,
                now=now,
                expires_at=expires_at,
                comparison=bool(batch.task_kind.comparison),
            )
    except IntegrityError:
        return None
    if taken is None:
        return None
    item_pk, order = taken
    return _regular_lease(
        batch, participation, assignment_pk, item_pk, order, now=now, expires_at=expires_at
    )


def _lease_locked(batch: Batch, participation: Participation, now: datetime) -> LeaseOutcome:
    """The general path, under the participant's row lock: their own lease (given back
    first when it expired), quota, the concurrency cap, a due check or repeat, then a
    regular item; or why there is none."""
    quota = batch.quota_per_annotator
    while True:
        with transaction.atomic():
            participation = _lock_participation(participation)
            # The lease is made now, not when the request began: waiting for this lock
            # (or SQLite's write lock) can take a while, and a lease dated before it would
            # be shorter than the batch's lease time and seem to overlap the participant's
            # previous one, released by someone else's sweep during the wait.
            now = max(now, timezone.now())
            annotator_id = participation.annotator_id
            done = participation.regular_labels
            if participation.status == Participation.Status.EXCLUDED:
                return LeaseOutcome(None, NoWorkReason.EXCLUDED, done, quota)
            if participation.departed_at is not None:
                return LeaseOutcome(None, NoWorkReason.DEPARTED, done, quota)
            current = (
                lock_rows(
                    Assignment.objects.filter(
                        batch=batch, annotator_id=annotator_id, state=AssignmentState.OPEN
                    )
                )
                .order_by("position_in_bundle")
                .first()
            )  # a bundle's next item: the open lease shown first
            if current is not None:
                if current.expires_at > now:
                    return LeaseOutcome(current, "", done, quota)
                # Give the slot back and commit before locking any other item: holding
                # this item's lock while waiting for another's could deadlock with an
                # annotator doing the same the other way round.
                release_leases([lease_row(current)])
                continue
            if quota is not None and done >= quota:
                return LeaseOutcome(None, NoWorkReason.QUOTA, done, quota)
            if _bundle_quota_reached(batch, annotator_id):
                # checks and repeats never come inside a bundle: one that fell due in the
                # participant's last bundle is shown when it ends (with one bundle each,
                # the study's design, it would otherwise never be shown)
                extra = quality.due_extra(batch, participation, done, now, has_regular_work=_yes)
                if extra is not None:
                    return LeaseOutcome(extra, "", done, quota)
                return LeaseOutcome(None, NoWorkReason.QUOTA, done, quota)
            if admission.at_capacity(batch, now):
                retry = admission.busy_retry_after(batch, now)
                return LeaseOutcome(None, NoWorkReason.BUSY, done, quota, retry)
            assignment = quality.due_extra(
                batch,
                participation,
                done,
                now,
                has_regular_work=partial(_has_regular_work, batch, annotator_id),
            )
            if assignment is None:
                if bundles.is_bundled(batch):
                    assignment = bundles.take_bundle(batch, annotator_id, now)
                else:
                    assignment = _take_slot(batch, annotator_id, now)
            if assignment is not None:
                participation.save(update_fields=["last_seen_at"])
                return LeaseOutcome(assignment, "", done, quota)
        break
    reason, retry_after = _why_no_work(batch, annotator_id, now)
    return LeaseOutcome(None, reason, done, quota, retry_after)


def _yes() -> bool:
    return True


def _bundle_quota_reached(batch: Batch, annotator_id: int) -> bool:
    limit = batch.bundles_per_participant
    if not limit or not bundles.is_bundled(batch):
        return False
    return bundles.bundles_taken(batch, annotator_id) >= limit


def _lock_participation(participation: Participation) -> Participation:
    try:
        return lock_rows(Participation.objects.filter(pk=participation.pk)).get()
    except Participation.DoesNotExist as missing:
        raise NotFound("This annotator has not entered the batch.") from missing


def _has_regular_work(batch: Batch, annotator_id: int) -> bool:
    return admission.takeable_items(batch, annotator_id).exists()


def _take_slot(batch: Batch, annotator_id: int, now: datetime) -> Assignment | None:
    ordered = bool(batch.task_kind.comparison)
    skipped: list[int] = []
    for _ in range(CANDIDATE_ATTEMPTS):
        candidates = (
            admission.takeable_items(batch, annotator_id)
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
    left = admission.work_left(batch, annotator_id)
    if left == admission.WorkLeft.TAKEABLE:
        # every candidate was taken under us a moment ago: ask again at once
        return NoWorkReason.WAIT, admission.WAIT_RETRY_BOUNDS[0]
    if left == admission.WorkLeft.HELD:
        # the slots this annotator could take are held by leases that may expire
        return NoWorkReason.WAIT, admission.held_retry_after(batch, annotator_id, now)
    if left == admission.WorkLeft.SEEN:
        return NoWorkReason.ALL_SEEN, None
    return NoWorkReason.DRAINED, None
