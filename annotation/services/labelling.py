"""Accepting a label for an assignment: counted, surplus or excluded, never lost."""

import math
import uuid
from dataclasses import dataclass
from datetime import datetime

from django.db import connection, transaction
from django.db.models import F
from django.utils import timezone
from django.utils.formats import number_format
from django.utils.translation import gettext

from annotation.kinds.base import CleanLabel
from annotation.models import (
    REGULAR_STATUSES,
    Annotator,
    Assignment,
    AssignmentState,
    Batch,
    Item,
    Label,
    LabelStatus,
    Participation,
    Purpose,
)
from annotation.services import known_batches, policies, quality, slots, sql
from annotation.services.leases import TAKEN_OVER, no_such_assignment
from annotation.setting_rules import MAX_COMMENT_CHARS
from core.errors import Conflict, InvalidInput
from core.locking import lock_rows
from core.text import check_text

MAX_DURATION_MS = 2**31 - 1
# the API's ``code`` of a 409 (docs/API.md): a client acts on it without reading the text
ALREADY_ANSWERED = "already_answered"  # a different answer to an item answered before
TAKEN_OVER_CODE = "taken_over"


@dataclass(frozen=True)
class SubmitOutcome:
    status: str
    created: bool  # False when this was an identical retry of an earlier submission
    label: Label


@dataclass(frozen=True)
class Submission:
    """A label as the annotator sent it, before a path decides what it is
    (``submit_label``'s arguments, checked for form)."""

    annotator: Annotator
    assignment_pk: uuid.UUID
    value: object
    duration_ms: object
    now: datetime
    browser_keys: frozenset[str] | None
    comment: str
    batch_slug: str | None


def submit_label(
    annotator: Annotator,
    assignment_id,
    value,
    duration_ms=None,
    now: datetime | None = None,
    *,
    browser_keys: frozenset[str] | None = None,
    cant_judge: bool = False,
    comment: str | None = None,
    batch_slug: str | None = None,
) -> SubmitOutcome:
    """Store the annotator's label for their assignment.

    With ``cant_judge`` (a batch that offers "I can't judge this"), no value: the label
    is stored as ``cant_judge``, never counted, and a regular lease still open gives its
    slot back, so the item goes to someone else. ``comment`` is the annotator's optional
    note (a batch with a comment box), kept with the label whatever its status.

    * an open lease: counted (its slot was reserved when it was leased);
    * an expired lease: counted if the item still has room (a pair: room in the order it
      was shown), otherwise ``surplus``;
    * an annotator excluded from the batch: stored as ``excluded``;
    * an attention check: ``check``, with ``check_passed``; a repeat: ``repeat`` (neither
      ever counts);
    * the same value again: the earlier outcome (an idempotent retry);
    * a different value again: ``Conflict``. A batch paused or closed since the lease
      was handed out still accepts the label: nothing a worker did is thrown away;
    * from a browser the participation is no longer bound to (``browser_keys``: the
      keys the submitting browser holds; another browser took the participation over):
      the answer to a lease the take-over released is kept as ``surplus``, never
      counted; a lease still open belongs to the other browser: ``Conflict``. ``None``
      (a caller without a browser) skips the check.

    ``value`` is as the worker gave it, relative to what was shown; it is stored in the
    kind's canonical terms (a pair: relative to the imported A and B) with the order shown.
    ``batch_slug`` is the batch the caller expects the assignment in (the crowdworker API:
    the one batch the browser's session works in): a hint that lets the common case skip
    reading the lease (``_submit_to_known_batch``), never a condition.
    After the label is stored, the batch's quality policies may exclude the annotator
    (``policies.apply_policies``, in its own transaction).
    """
    now = now or timezone.now()
    assignment_uuid = _parse_assignment_id(assignment_id)
    cant_judge = _flag("cant_judge", cant_judge)
    comment = _clean_comment(comment)
    if not cant_judge:  # "can't judge" always takes the locked path
        submitted = Submission(
            annotator, assignment_uuid, value, duration_ms, now, browser_keys, comment, batch_slug
        )
        for attempt in (_submit_to_known_batch, _submit_in_one_statement):
            fast = attempt(submitted)
            if fast is not None:
                return fast
    with transaction.atomic():
        _lock_participation(annotator, assignment_uuid)
        assignment = (
            lock_rows(Assignment.objects.filter(pk=assignment_uuid, annotator=annotator))
            .select_related("batch")
            .first()
        )
        if assignment is None:
            raise no_such_assignment()
        batch = assignment.batch
        kind = batch.task_kind
        _check_offered(batch, cant_judge, comment)
        clean = (
            CleanLabel()
            if cant_judge
            else kind.canonical(kind.clean_label(batch, value), assignment.shown_order)
        )
        duration_ms = _validate_duration(duration_ms)
        if assignment.state == AssignmentState.SUBMITTED:
            earlier = Label.objects.get(assignment=assignment)
            passed_before = is_pass(earlier)
            if passed_before != cant_judge or not kind.same_label(_stored(earlier), clean):
                shown = gettext("“I can't judge this”") if passed_before else kind.shown(earlier)
                raise Conflict(
                    "value: "
                    + gettext(
                        "this assignment was already labelled %(value)s; a label cannot be changed"
                    )
                    % {"value": shown},
                    code=ALREADY_ANSWERED,
                )
            return SubmitOutcome(_answered(earlier), False, earlier)
        check_passed, too_fast, straightlined = None, False, False
        if cant_judge and assignment.purpose == Purpose.REPEAT:
            # the item was labelled before (one label per annotator and item, repeats
            # apart): a pass on its repeat is kept as the repeat, without a value
            status = LabelStatus.REPEAT
        elif cant_judge and assignment.purpose == Purpose.CHECK:
            # an attention check is made to be answerable: passing on it is failing it
            # (else passing on every check would never fail one)
            status, check_passed = LabelStatus.CHECK, False
        elif cant_judge:
            # never counted, whatever the lease was for; a regular open lease's slot goes
            # back at once (an expired one gave it back already)
            status = LabelStatus.CANT_JUDGE
            if assignment.purpose == Purpose.REGULAR and assignment.state == AssignmentState.OPEN:
                slots.release_slots([(assignment.item_id, assignment.shown_order)])
        elif assignment.purpose == Purpose.CHECK:
            status = LabelStatus.CHECK
            gold = Item.objects.filter(pk=assignment.item_id).values_list("gold", flat=True)
            check_passed = kind.passes_check(gold.get() or [], clean)
        elif assignment.purpose == Purpose.REPEAT:
            status = LabelStatus.REPEAT
        else:
            participant, bound = (
                Participation.objects.filter(
                    batch_id=assignment.batch_id, annotator_id=assignment.annotator_id
                )
                .values_list("status", "browser_key")
                .first()
            ) or ("", "")
            if browser_keys is not None and bound and bound not in browser_keys:
                # another browser took the participation over
                if assignment.state == AssignmentState.OPEN:
                    # taking over released every lease the old browser held: an open
                    # one was handed to the browser that now holds the participation
                    raise Conflict("assignment: " + str(TAKEN_OVER), code=TAKEN_OVER_CODE)
                status = LabelStatus.SURPLUS
            else:
                excluded = participant == Participation.Status.EXCLUDED
                status = _claim_count(assignment, excluded)
                too_fast, straightlined = quality.flags(
                    batch, annotator.pk, clean.value, duration_ms
                )
        label = Label.objects.create(
            assignment=assignment,
            batch_id=assignment.batch_id,
            item_id=assignment.item_id,
            annotator=annotator,
            kind=batch.kind,
            value=clean.value,
            text=clean.text,
            answer=clean.answer,
            status=status,
            shown_order=assignment.shown_order,
            position_in_bundle=assignment.position_in_bundle,
            check_passed=check_passed,
            comment=comment,
            too_fast=too_fast,
            straightlined=straightlined,
            duration_ms=duration_ms,
            submitted_at=now,
        )
        if status in REGULAR_STATUSES:
            count_regular_label(assignment.batch_id, annotator.pk)
        assignment.state = AssignmentState.SUBMITTED
        assignment.submitted_at = now
        assignment.save(update_fields=["state", "submitted_at"])
    if status != LabelStatus.REPEAT:
        policies.apply_policies(batch, annotator.pk)
    return SubmitOutcome(_answered(label), True, label)


def is_pass(label: Label) -> bool:
    """Whether a stored label is "I can't judge this": a ``cant_judge`` label, or a repeat
    or an attention check without a value (a pass on one of those)."""
    if label.status == LabelStatus.CANT_JUDGE:
        return True
    kept_as = (LabelStatus.REPEAT, LabelStatus.CHECK)
    return label.status in kept_as and label.value is None and label.text is None


def _answered(label: Label) -> str:
    """The status the label's sender is told: a pass is ``cant_judge`` however stored, and
    an attention check's or a repeat's label ``counted``, as a regular item's would be
    (the answer must not tell a participant which items were checks)."""
    if is_pass(label):
        return LabelStatus.CANT_JUDGE
    if label.status in (LabelStatus.CHECK, LabelStatus.REPEAT):
        return LabelStatus.COUNTED
    return label.status


def _lock_participation(annotator: Annotator, assignment_pk: uuid.UUID) -> None:
    """Lock the participation of the lease's batch before the lease: every writer takes
    the two in this order (an exclusion, leasing, the one-statement label), so a label
    and an exclusion of its annotator wait for each other instead of deadlocking."""
    if not connection.features.has_select_for_update:
        return  # SQLite: one writer at a time, no order to keep
    participations = Participation.objects.filter(
        annotator=annotator, batch__assignments__pk=assignment_pk
    )
    list(lock_rows(participations).values_list("pk", flat=True))


def count_regular_label(batch_pk: int, annotator_pk: int) -> None:
    """One more regular label of the participant (``Participation.regular_labels``): the
    locked path's twin of what ``slots.count_label_in_one_statement`` does in its
    statement; the two are the only writers of that column."""
    Participation.objects.filter(batch_id=batch_pk, annotator_id=annotator_pk).update(
        regular_labels=F("regular_labels") + 1
    )


def _submit_in_one_statement(submitted: Submission) -> SubmitOutcome | None:
    """The common case on PostgreSQL — the first submission to an open regular lease of
    an annotator who is not excluded — as one read and one write
    (``slots.count_label_in_one_statement``). ``None`` when it does not apply, or when the
    lease changed between the two (submitted by a retry, expired, its annotator
    excluded): the locked path then decides, as for any other submission."""
    if connection.vendor != "postgresql":
        return None
    annotator, browser_keys = submitted.annotator, submitted.browser_keys
    with sql.cursor() as cursor:
        params = {"assignment": submitted.assignment_pk, "annotator": annotator.pk}
        cursor.execute(_lease_sql(), params)
        row = cursor.fetchone()
    if row is None:
        raise no_such_assignment()
    n_assignment = len(sql.columns(Assignment))
    assignment = sql.instance(Assignment, row[:n_assignment])
    assignment.batch = sql.instance(Batch, row[n_assignment:-3])
    annotator_excluded, bound_browser, version = row[-3:]
    known_batches.remember(row[n_assignment:-3], version)
    if (
        assignment.state != AssignmentState.OPEN
        or assignment.purpose != Purpose.REGULAR
        or annotator_excluded
        or (browser_keys is not None and bound_browser and bound_browser not in browser_keys)
    ):
        return None
    batch = assignment.batch
    kind = batch.task_kind
    _check_offered(batch, False, submitted.comment)
    clean = kind.canonical(kind.clean_label(batch, submitted.value), assignment.shown_order)
    columns = _label_columns(batch, submitted, clean, _validate_duration(submitted.duration_ms))
    stored = slots.count_label_in_one_statement(
        assignment_pk=assignment.pk, annotator_pk=annotator.pk, label=columns, now=submitted.now
    )
    if stored is None:
        return None
    return _counted(stored, submitted, batch, columns, assignment=assignment)


def _submit_to_known_batch(submitted: Submission) -> SubmitOutcome | None:
    """The common case in **one** statement, without reading the lease: the batch's
    settings come from this process's copy (``known_batches``), and the statement writes
    only if the batch row is still the version the copy was read from, the participation
    is bound to this browser (or none) and the lease is an open regular one of this
    annotator (``slots.BatchGuard``). A pair's value is sent in both presentation orders;
    the statement stores the one of the order the lease showed. ``None`` when any of that
    does not hold, when the value does not pass this copy's check (the caller's path then
    reads the batch and says what is wrong), or when the batch flags straight runs (which
    reads the annotator's earlier labels): the caller then reads the lease."""
    slug, browser_keys = submitted.batch_slug, submitted.browser_keys
    if slug is None or browser_keys is None or connection.vendor != "postgresql":
        return None
    known = known_batches.known(slug)
    if known is None:
        return None
    batch, version = known
    if (batch.straightline_run or 0) > 1:
        return None
    kind = batch.task_kind
    try:
        _check_offered(batch, False, submitted.comment)
        given = kind.clean_label(batch, submitted.value)
        duration_ms = _validate_duration(submitted.duration_ms)
    except InvalidInput:
        return None
    columns = _label_columns(batch, submitted, kind.canonical(given, "ab"), duration_ms)
    shown_ba = {}
    if kind.comparison:
        flipped = _label_columns(batch, submitted, kind.canonical(given, "ba"), duration_ms)
        shown_ba = {name: flipped[name] for name in columns if flipped[name] != columns[name]}
    stored = slots.count_label_in_one_statement(
        assignment_pk=submitted.assignment_pk,
        annotator_pk=submitted.annotator.pk,
        label=columns,
        now=submitted.now,
        guard=slots.BatchGuard(batch.pk, version, browser_keys),
        shown_ba=shown_ba,
    )
    if stored is None:
        return None
    if stored.shown_order == "ba":
        columns.update(shown_ba)
    return _counted(stored, submitted, batch, columns)


def _label_columns(batch: Batch, submitted: Submission, clean: CleanLabel, duration_ms) -> dict:
    """The label's own columns, as ``slots.count_label_in_one_statement`` takes them
    (its quality flags: a regular label's, ``quality.flags``)."""
    too_fast, straightlined = quality.flags(batch, submitted.annotator.pk, clean.value, duration_ms)
    return {
        "comment": submitted.comment,
        "kind": batch.kind,
        "value": clean.value,
        "text": clean.text,
        "answer": clean.answer,
        "check_passed": None,
        "too_fast": too_fast,
        "straightlined": straightlined,
        "duration_ms": duration_ms,
    }


def _counted(
    stored: slots.StoredLabel,
    submitted: Submission,
    batch: Batch,
    columns: dict,
    *,
    assignment: Assignment | None = None,
) -> SubmitOutcome:
    """The outcome of a label the one-statement paths stored as counted; then the
    batch's quality policies, as after any label."""
    annotator = submitted.annotator
    label = sql.stored(  # the statement inserted the row
        Label,
        {
            "id": stored.pk,
            "assignment_id": submitted.assignment_pk,
            "batch_id": batch.pk,
            "item_id": stored.item_pk,
            "annotator_id": annotator.pk,
            "status": LabelStatus.COUNTED,
            "shown_order": stored.shown_order,
            "position_in_bundle": stored.position_in_bundle,
            "submitted_at": submitted.now,
            **columns,
        },
    )
    label.batch, label.annotator = batch, annotator
    if assignment is not None:
        label.assignment = assignment
    policies.apply_policies(batch, annotator.pk)
    return SubmitOutcome(LabelStatus.COUNTED, True, label)


@sql.statement
def _lease_sql() -> str:
    """The lease with its batch, whether its annotator is excluded from the batch, and
    the browser key their participation is bound to (the participation read once: one
    per annotator and batch)."""
    return f"""
        SELECT {sql.select_list(Assignment, "a")}, {sql.select_list(Batch, "b")},
            COALESCE(p.status = 'excluded', FALSE), p.browser_key,
            {known_batches.version_of("b", connection.vendor)}
        FROM {sql.table(Assignment)} a JOIN {sql.table(Batch)} b ON b.id = a.batch_id
        LEFT JOIN {sql.table(Participation)} p
            ON p.batch_id = a.batch_id AND p.annotator_id = a.annotator_id
        WHERE a.id = %(assignment)s AND a.annotator_id = %(annotator)s
    """


def _claim_count(assignment: Assignment, excluded: bool) -> str:
    """Decide the label's status (``excluded``: the annotator is excluded from the
    batch) and move the item's counters accordingly."""
    slot = (assignment.item_id, assignment.shown_order)
    if excluded:
        if assignment.state == AssignmentState.OPEN:
            slots.release_slots([slot])
        return LabelStatus.EXCLUDED
    if assignment.state == AssignmentState.OPEN:
        slots.count_reserved(assignment.item_id)
        return LabelStatus.COUNTED
    # The lease expired and gave its slot back: count only if there is still room.
    return LabelStatus.COUNTED if slots.count_if_room(*slot) else LabelStatus.SURPLUS


def _flag(field: str, raw) -> bool:
    if raw is None:
        return False
    if not isinstance(raw, bool):
        raise InvalidInput(field, f"must be true or false, got {raw!r}")
    return raw


def _clean_comment(raw) -> str:
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise InvalidInput("comment", gettext("must be text"))
    comment = raw.strip()
    if len(comment) > MAX_COMMENT_CHARS:
        raise InvalidInput(
            "comment",
            gettext("is %(length)s characters long; at most %(limit)s")
            % {"length": number_format(len(comment)), "limit": number_format(MAX_COMMENT_CHARS)},
        )
    check_text("comment", comment, multiline=True)
    return comment


def _check_offered(batch: Batch, cant_judge: bool, comment: str) -> None:
    """What the annotator may say besides a label is what the batch offers."""
    if cant_judge and not batch.allow_cant_judge:
        raise InvalidInput("cant_judge", gettext("this study does not offer “I can't judge this”"))
    if comment and batch.comment_box == "none":
        raise InvalidInput("comment", gettext("this study takes no comments"))


def _parse_assignment_id(assignment_id) -> uuid.UUID:
    try:
        return uuid.UUID(str(assignment_id))
    except (ValueError, AttributeError, TypeError) as bad:
        raise no_such_assignment() from bad


def _stored(label: Label) -> CleanLabel:
    return CleanLabel(value=label.value, text=label.text, answer=label.answer)


def _validate_duration(duration_ms) -> int | None:
    if duration_ms is None:
        return None
    if isinstance(duration_ms, bool) or not isinstance(duration_ms, int | float):
        raise InvalidInput("duration_ms", f"must be a non-negative integer, got {duration_ms!r}")
    # a whole number of milliseconds (1500.0 is one; 2.5, NaN and 1e309 = inf are not)
    if duration_ms < 0 or not math.isfinite(duration_ms) or duration_ms != int(duration_ms):
        raise InvalidInput("duration_ms", f"must be a non-negative integer, got {duration_ms!r}")
    return int(min(duration_ms, MAX_DURATION_MS))
