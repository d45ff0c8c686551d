"""Who may start or continue work in a batch, and what a worker is told at the end.

* ``admit`` — decided on the entry page *before* consent: can this worker get any work
  at all? A late arrival to a full batch sees "study full" and is never asked to consent
  to, or paid for, nothing;
* ``require_ready`` — the server enforces consent and the background questionnaire: no
  item is handed out before both are done (when the batch has them);
* ``at_capacity`` — the batch's cap on workers holding a lease at once;
* ``completion`` — the completion code is shown only to a worker who did at least one
  item (or with the batch's ``full_code``, for platforms that require a code); a
  screened-out worker gets the ``screen_out_code`` (or none) and a request to return.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import F
from django.utils import timezone

from annotation.models import (
    REGULAR_STATUSES,
    Assignment,
    AssignmentState,
    Batch,
    Item,
    Label,
    Participation,
)
from core.errors import Unavailable


class Admission:
    OPEN = "open"  # there is work this worker can take
    DONE = "done"  # they took part and nothing is left for them: their completion page
    FULL = "full"  # nothing left for a newcomer: "study full", return the study
    BUSY = "busy"  # the cap on concurrent workers is reached: try again in a few minutes
    QUOTA = "quota"  # they did as many items as the batch asks of one person
    EXCLUDED = "excluded"  # screened out


def admit(batch: Batch, participation: Participation, now: datetime | None = None) -> str:
    """Whether this worker can get an item now (``Admission.OPEN``) or why not."""
    now = now or timezone.now()
    if participation.status == Participation.Status.EXCLUDED:
        return Admission.EXCLUDED
    annotator_id = participation.annotator_id
    done = Label.objects.filter(
        batch=batch, annotator_id=annotator_id, status__in=REGULAR_STATUSES
    ).count()
    if batch.quota_per_annotator is not None and done >= batch.quota_per_annotator:
        return Admission.QUOTA
    holds_lease = Assignment.objects.filter(
        batch=batch, annotator_id=annotator_id, state=AssignmentState.OPEN, expires_at__gt=now
    ).exists()
    if holds_lease:
        return Admission.OPEN
    takeable = Item.objects.filter(batch=batch, reserved_count__lt=F("target")).exclude(
        assignments__annotator_id=annotator_id
    )
    if not takeable.exists():
        return Admission.DONE if done else Admission.FULL
    if at_capacity(batch, now):
        return Admission.BUSY
    return Admission.OPEN


def at_capacity(batch: Batch, now: datetime | None = None) -> bool:
    """Whether ``max_concurrent_annotators`` workers already hold an unexpired lease."""
    if not batch.max_concurrent_annotators:
        return False
    now = now or timezone.now()
    holding = (
        Assignment.objects.filter(batch=batch, state=AssignmentState.OPEN, expires_at__gt=now)
        .values("annotator_id")
        .distinct()
        .count()
    )
    return holding >= batch.max_concurrent_annotators


def needs_consent(batch: Batch, participation: Participation) -> bool:
    return bool(batch.consent_text.strip()) and participation.consented_at is None


def needs_questionnaire(batch: Batch, participation: Participation) -> bool:
    return bool(batch.questionnaire) and participation.answered_at is None


_UNREAD = object()


def require_ready(
    batch: Batch, participation: Participation, *, consented_at=_UNREAD, answered_at=_UNREAD
) -> None:
    """``Unavailable`` (403) until the worker has consented and answered the questionnaire.

    Both are read from the database now, unless the caller read them in this request
    already and passes them (``consented_at``, ``answered_at``).
    """
    if consented_at is _UNREAD or answered_at is _UNREAD:
        fresh = Participation.objects.filter(pk=participation.pk)
        state = fresh.values("consented_at", "answered_at").first() or {}
        consented_at, answered_at = state.get("consented_at"), state.get("answered_at")
    participation.consented_at = consented_at
    participation.answered_at = answered_at
    if needs_consent(batch, participation):
        raise Unavailable(
            "consent",
            "Please read and accept the consent form first: open the study link again.",
        )
    if needs_questionnaire(batch, participation):
        raise Unavailable(
            "questionnaire",
            "Please answer the short questionnaire first: open the study link again.",
        )


@dataclass(frozen=True)
class Completion:
    """What the end page shows: a code (or none), where to go, and whether to return."""

    code: str | None
    url: str | None
    return_study: bool  # a Prolific/MTurk worker should return (not submit) the study


def completion(batch: Batch, participation: Participation, done: int) -> Completion:
    """The end of a worker's participation.

    * screened out: the ``screen_out_code`` if the batch has one, else no code and a
      request to return the study;
    * at least one item done: the completion code (and URL);
    * nothing done: the ``full_code`` if the batch has one (platforms that require a
      code), else no code and a request to return the study — never a code for nothing;
    * an invitation-link worker of a batch without a completion URL sees a plain thank
      you: no code (there is no platform to give it to), nothing to return.
    """
    invited = participation.annotator.platform == "generic"
    if participation.status == Participation.Status.EXCLUDED:
        if invited:
            return Completion(None, None, False)
        return Completion(batch.screen_out_code or None, None, not batch.screen_out_code)
    if invited and not batch.completion_url:
        return Completion(None, None, False)
    if done > 0:
        return Completion(batch.completion_code, batch.completion_url or None, False)
    return completion_for_newcomer(batch)


def completion_for_newcomer(batch: Batch) -> Completion:
    """A worker who did nothing (the batch was full when they came)."""
    if batch.full_code:
        return Completion(batch.full_code, batch.completion_url or None, False)
    return Completion(None, None, True)
