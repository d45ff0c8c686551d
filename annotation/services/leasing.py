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
(``WorkState``; the crowdworker API reads it with the participation and the batch), and on
PostgreSQL a regular lease is then taken in one statement that also does the locking
above (``slots.lease_in_one_statement``). Anything else — a check or repeat due, a cap on
concurrent workers, no unlocked candidate, SQLite — takes the locked path, which is the
reference the one-statement path must agree with.

Expiry needs no background process: every lease call first gives back the slots of this
batch's expired leases (``expire_leases``); a periodic task may call it too. While the
rating page is visible it extends its lease (``extend_lease``, the heartbeat) up to the
batch's cap, so a short lease recycles abandoned slots without cutting off careful readers.
"""

import uuid
from contextlib import nullcontext
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial

from django.db import IntegrityError, connection, transaction
from django.db.models import Count, Exists, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy

from annotation.models import (
    REGULAR_STATUSES,
    Annotator,
    Assignment,
    AssignmentState,
    Batch,
    BatchState,
    Label,
    Participation,
    Purpose,
)
from annotation.services import admission, bundles, quality, slots, sql
from annotation.services.leases import new_lease
from core.errors import Conflict, NotFound, Unavailable
from core.locking import lock_rows

EXPIRY_CHUNK = 1000
CANDIDATE_ATTEMPTS = 20


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
            done=get("work_done") or 0,
            stale_leases=bool(get("work_stale_leases")),
            held_lease=get("work_held_lease"),
        )


def work_state_fields(batch_ref, annotator_ref, now: datetime) -> dict:
    """Annotations of a participation query that make up its ``WorkState`` with the
    participation's own columns; ``batch_ref`` and ``annotator_ref`` name the batch and
    the annotator (``OuterRef("batch_id")`` and ``OuterRef("annotator_id")``)."""
    done = (
        Label.objects.filter(
            batch_id=batch_ref, annotator_id=annotator_ref, status__in=REGULAR_STATUSES
        )
        .order_by()
        .values("annotator_id")
        .annotate(n=Count("pk"))
        .values("n")
    )
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
        "work_done": Coalesce(Subquery(done), 0),
        "work_stale_leases": Exists(stale),
        "work_held_lease": Subquery(held),
    }


def participation_for_work(
    batch_slug: str, annotator_pk: int, now: datetime
) -> tuple[Participation, WorkState] | None:
    """The annotator's participation in the batch (its ``batch`` loaded) and its
    ``WorkState``, in one query — what a request for work needs before deciding — or
    ``None`` when there is no such participation (``annotation.services.sql``)."""
    with connection.cursor() as cursor:
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
    done, stale, held = row[n_participation + n_batch :]
    state = WorkState(
        status=participation.status,
        consented_at=participation.consented_at,
        answered_at=participation.answered_at,
        next_check_after=participation.next_check_after,
        next_repeat_after=participation.next_repeat_after,
        done=done,
        stale_leases=bool(stale),
        held_lease=uuid.UUID(str(held)) if held is not None else None,
    )
    return participation, state


@sql.statement
def _work_state_sql() -> str:
    label, assignment = sql.table(Label), sql.table(Assignment)
    regular = ", ".join(f"'{status}'" for status in REGULAR_STATUSES)
    return f"""
        SELECT {sql.select_list(Participation, "p")}, {sql.select_list(Batch, "b")},
            (SELECT COUNT(*) FROM {label} l
             WHERE l.batch_id = p.batch_id AND l.annotator_id = p.annotator_id
               AND l.status IN ({regular})),
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
        .values(*WORK_STATE_COLUMNS, "work_done", "work_stale_leases", "work_held_lease")
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
)


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


def lease_next_item(
    batch: Batch,
    participation: Participation,
    now: datetime | None = None,
    *,
    state: WorkState | None = None,
) -> LeaseOutcome:
    """The annotator's current lease in this batch, or a new one, or why there is none.

    ``state`` is the participant's ``WorkState`` read at ``now`` by the caller in the same
    query as the participation (the crowdworker API does); without it, it is read here.

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
    if quota is not None and state.done >= quota:
        return LeaseOutcome(None, NoWorkReason.QUOTA, state.done, quota)
    if _one_statement_applies(batch, state):
        assignment = _lease_in_one_statement(batch, participation, now)
        if assignment is not None:
            return LeaseOutcome(assignment, "", state.done, quota)
    return _lease_locked(batch, participation, now)


def _one_statement_applies(batch: Batch, state: WorkState) -> bool:
    """Whether this lease can only be a regular item, with nothing else to decide under
    the participant's lock: PostgreSQL, no cap on concurrent workers, and no attention
    check or repeat due (nor their first due point still to be drawn)."""
    if (
        connection.vendor != "postgresql"
        or batch.max_concurrent_annotators
        or bundles.is_bundled(batch)
    ):
        return False
    return not (
        quality.is_due(batch.check_every, state.next_check_after, state.done)
        or quality.is_due(batch.repeat_every, state.next_repeat_after, state.done)
    )


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
    assignment = Assignment(
        pk=assignment_pk,
        batch=batch,
        item_id=item_pk,
        annotator_id=participation.annotator_id,
        state=AssignmentState.OPEN,
        purpose=Purpose.REGULAR,
        shown_order=order,
        leased_at=now,
        expires_at=expires_at,
    )
    assignment._state.adding = False  # the row exists: the statement inserted it
    assignment._state.db = connection.alias
    return assignment


def _lease_locked(batch: Batch, participation: Participation, now: datetime) -> LeaseOutcome:
    """The general path, under the participant's row lock: their own lease (given back
    first when it expired), quota, the concurrency cap, a due check or repeat, then a
    regular item; or why there is none."""
    quota = batch.quota_per_annotator
    while True:
        with transaction.atomic():
            participation = _lock_participation(participation)
            annotator_id = participation.annotator_id
            done = regular_done(batch, annotator_id)
            if participation.status == Participation.Status.EXCLUDED:
                return LeaseOutcome(None, NoWorkReason.EXCLUDED, done, quota)
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
                release_leases([_lease_row(current)])
                continue
            if quota is not None and done >= quota:
                return LeaseOutcome(None, NoWorkReason.QUOTA, done, quota)
            if _bundle_quota_reached(batch, annotator_id):
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


def _bundle_quota_reached(batch: Batch, annotator_id: int) -> bool:
    limit = batch.bundles_per_participant
    if not limit or not bundles.is_bundled(batch):
        return False
    return bundles.bundles_taken(batch, annotator_id) >= limit


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
            raise Conflict(
                "assignment: " + gettext("this lease is no longer open; it cannot be extended")
            )
        excluded = Participation.objects.filter(
            batch_id=assignment.batch_id,
            annotator=annotator,
            status=Participation.Status.EXCLUDED,
        ).exists()
        if excluded:
            raise Conflict("assignment: " + gettext("you no longer take part in this batch"))
        batch = assignment.batch
        cap = assignment.leased_at + timedelta(seconds=batch.lease_cap_seconds)
        extended = min(now + timedelta(seconds=batch.lease_seconds), cap)
        if extended > assignment.expires_at:
            assignment.expires_at = extended
            assignment.save(update_fields=["expires_at"])
            if assignment.position_in_bundle is not None:
                # a bundle's leases were taken together and live together
                Assignment.objects.filter(
                    batch_id=assignment.batch_id,
                    annotator=annotator,
                    state=AssignmentState.OPEN,
                    leased_at=assignment.leased_at,
                ).update(expires_at=extended)
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
