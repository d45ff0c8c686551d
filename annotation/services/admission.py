"""Who may start or continue work in a batch, and what a worker is told at the end.

* ``admit`` — decided on the entry page *before* consent: can this worker get any work
  at all? A late arrival to a full batch sees "study full" and is never asked to consent
  to, or paid for, nothing; while the slots they could take are only *held* by other
  workers' live leases (``WorkLeft.HELD``), they are asked to wait, never told "full";
* ``work_left`` — the one rule for what remains for an annotator: a slot they can take,
  slots held by others' leases that may come back, only items they already had, or
  nothing (every regular item complete); the leasing path uses it too;
* ``require_ready`` — the server enforces consent and the background questionnaire: no
  item is handed out before both are done (when the batch has them);
* ``at_capacity`` — the batch's cap on workers holding a lease at once;
* ``completion`` — the ending a worker is shown, one of ``Ending``: the completion code
  only to a worker who did at least one item; the ``full_code`` (for platforms that
  require a code) or a request to return to one who did nothing; a screened-out worker
  the ``screen_out_code`` and ``screen_out_url`` (or a request to return), never worded
  as a completion; an invitation-link worker is never asked to return anything.
"""

from dataclasses import dataclass
from datetime import datetime

from django.db.models import F, Min
from django.utils import timezone
from django.utils.translation import gettext

from annotation.models import (
    Assignment,
    AssignmentState,
    Batch,
    Item,
    Participation,
)
from annotation.services import bundles
from core.errors import Unavailable


class Admission:
    OPEN = "open"  # there is work this worker can take
    DONE = "done"  # they took part and nothing is left for them: their completion page
    FULL = "full"  # nothing left for a newcomer: "study full", return the study
    WAIT = "wait"  # what they could take is held by others' live leases: wait for it
    BUSY = "busy"  # the cap on concurrent workers is reached: wait, or come back later
    QUOTA = "quota"  # they did as many items as the batch asks of one person
    EXCLUDED = "excluded"  # screened out


class WorkLeft:
    """What remains of a batch for one annotator (``work_left``)."""

    TAKEABLE = "takeable"  # a regular item with a free slot they were never leased
    HELD = "held"  # unfinished items they could take, every slot held by a live lease
    SEEN = "seen"  # unfinished items remain, but each was leased to them before
    NONE = "none"  # every regular item has its N counted labels


# how soon a worker told to wait asks again, in seconds: the soonest expiry of a lease
# that holds a slot they could take, within these bounds (a slot also comes back sooner
# than any expiry: a platform return, an exclusion, a browser taking over)
WAIT_RETRY_BOUNDS = (5, 15)


def _unfinished_for(batch: Batch, annotator_id: int):
    """Regular items short of N that this annotator was never leased — in a bundled
    batch, of bundles they never touched: what could still become theirs (a slot that is
    free now, or one that comes back when a lease ends)."""
    items = Item.objects.filter(batch=batch, is_check=False, counted_count__lt=F("target"))
    return _not_theirs(batch, items, annotator_id)


def _not_theirs(batch: Batch, items, annotator_id: int):
    items = items.exclude(assignments__annotator_id=annotator_id)
    if bundles.is_bundled(batch):
        items = items.exclude(bundle__in=bundles.touched_bundles(batch, annotator_id))
    return items


def takeable_items(batch: Batch, annotator_id: int):
    """Items with a free slot that this annotator was never leased — in a bundled batch,
    of bundles they could be leased whole now (``bundles.takeable_bundles``: one item with
    a free slot is not enough while another of its bundle has none), so that nobody is
    let in to consent only to be told to wait (only regular items have slots: a check's
    target is 0)."""
    items = Item.objects.filter(batch=batch, reserved_count__lt=F("target"))
    if bundles.is_bundled(batch):
        items = items.filter(bundle__in=bundles.takeable_bundles(batch, annotator_id))
    return _not_theirs(batch, items, annotator_id)


def work_left(batch: Batch, annotator_id: int) -> str:
    """What remains for this annotator, as ``WorkLeft``. Expired leases must have been
    given back first (``leasing.expire_leases``): a slot of an expired lease is free."""
    if takeable_items(batch, annotator_id).exists():
        return WorkLeft.TAKEABLE
    if _unfinished_for(batch, annotator_id).exists():
        return WorkLeft.HELD
    if Item.objects.filter(batch=batch, is_check=False, counted_count__lt=F("target")).exists():
        return WorkLeft.SEEN
    return WorkLeft.NONE


def held_retry_after(batch: Batch, annotator_id: int, now: datetime) -> int:
    """Seconds until the soonest lease holding a slot this annotator could take ends
    (within ``WAIT_RETRY_BOUNDS``): when a worker told to wait should ask again."""
    soonest = Assignment.objects.filter(
        item__in=_unfinished_for(batch, annotator_id), state=AssignmentState.OPEN
    ).aggregate(soonest=Min("expires_at"))["soonest"]
    return _bounded_seconds(soonest, now)


def busy_retry_after(batch: Batch, now: datetime) -> int:
    """Seconds until the soonest open lease of the batch ends (within the bounds): when a
    worker kept out by the concurrency cap should ask again."""
    soonest = Assignment.objects.filter(batch=batch, state=AssignmentState.OPEN).aggregate(
        soonest=Min("expires_at")
    )["soonest"]
    return _bounded_seconds(soonest, now)


def _bounded_seconds(moment: datetime | None, now: datetime) -> int:
    low, high = WAIT_RETRY_BOUNDS
    seconds = (moment - now).total_seconds() if moment else low
    return int(min(max(seconds, low), high))


def admit(
    batch: Batch, participation: Participation, now: datetime | None = None, *, known=None
) -> str:
    """Whether this worker can get an item now (``Admission.OPEN``) or why not.

    The caller gives back the batch's expired leases first (``entry.enter`` does), so an
    expired lease never makes the batch look full. ``known`` is what the caller read at
    ``now`` in one query (``work_state.EntryState``): whether the worker holds a lease and
    whether a slot they could take is free; without it, both are asked here."""
    now = now or timezone.now()
    if participation.status == Participation.Status.EXCLUDED:
        return Admission.EXCLUDED
    annotator_id = participation.annotator_id
    done = participation.regular_labels
    if batch.quota_per_annotator is not None and done >= batch.quota_per_annotator:
        return Admission.QUOTA
    if known is not None:
        holds_lease = known.holds_lease
    else:
        holds_lease = Assignment.objects.filter(
            batch=batch, annotator_id=annotator_id, state=AssignmentState.OPEN, expires_at__gt=now
        ).exists()
    if holds_lease:
        return Admission.OPEN
    takeable = known is not None and known.takeable
    left = WorkLeft.TAKEABLE if takeable else work_left(batch, annotator_id)
    if left == WorkLeft.HELD:
        return Admission.WAIT
    if left != WorkLeft.TAKEABLE:
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


def asks_for_consent(batch: Batch) -> bool:
    return bool(batch.consent_text.strip())


def asks_questionnaire(batch: Batch) -> bool:
    return bool(batch.questionnaire)


def needs_consent(batch: Batch, participation: Participation) -> bool:
    return asks_for_consent(batch) and participation.consented_at is None


def needs_questionnaire(batch: Batch, participation: Participation) -> bool:
    return asks_questionnaire(batch) and participation.answered_at is None


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
            gettext("Please read and accept the consent form first: open the study link again."),
        )
    if needs_questionnaire(batch, participation):
        raise Unavailable(
            "questionnaire",
            gettext("Please answer the short questionnaire first: open the study link again."),
        )


class Ending:
    """The kinds of ending a worker is shown, each with its own wording, code and URL."""

    COMPLETED = "completed"  # did at least one item: the completion code and URL
    SCREENED_OUT = "screened_out"  # excluded: the screen-out code and URL
    FULL = "full"  # did nothing (nothing was left): the full code, or return the study
    THANKS = "thanks"  # an invitation-link worker with nowhere to go: a plain thank you
    DEPARTED = "departed"  # the platform says they left (returned…): no code, no address


@dataclass(frozen=True)
class Completion:
    """What the end page shows: which ending, a code (or none), where to go (or
    nowhere), and whether to return the study on the platform."""

    ending: str
    code: str | None
    url: str | None
    return_study: bool  # a Prolific/MTurk worker should return (not submit) the study


def completion(batch: Batch, participation: Participation, done: int) -> Completion:
    """The end of a worker's participation.

    * screened out: ``Ending.SCREENED_OUT`` with the ``screen_out_code`` and
      ``screen_out_url`` if the batch has them, else no code and a request to return
      the study (an invitation-link worker: no request, there is no study to return);
    * at least one item done: ``Ending.COMPLETED``, the completion code (and URL);
    * nothing done: ``completion_for_newcomer`` — never a code for nothing;
    * an invitation-link worker of a batch without a completion URL sees a plain thank
      you (``Ending.THANKS``): no code (there is no platform to give it to);
    * an MTurk worker who did items submits the HIT: never sent to the completion URL.
    """
    platform = participation.annotator.platform
    invited = platform == "generic"
    # an MTurk worker who did items ends by submitting the HIT (the page's form to MTurk):
    # the completion link is another platform's (Prolific's), never theirs
    own_address = platform != "mturk"
    if participation.departed_at is not None and participation.status != (
        Participation.Status.EXCLUDED
    ):
        # they returned the study (or it timed out): a code would ask to be paid for it
        return Completion(Ending.DEPARTED, None, None, False)
    if participation.status == Participation.Status.EXCLUDED:
        # (no HIT to submit when screened out: the screen-out address is theirs too)
        url = batch.screen_out_url or None
        if invited:
            return Completion(Ending.SCREENED_OUT, None, url, False)
        code = batch.screen_out_code or None
        return Completion(Ending.SCREENED_OUT, code, url, not code)
    if invited and not batch.completion_url:
        return Completion(Ending.THANKS, None, None, False)
    if done > 0:
        url = (batch.completion_url or None) if own_address else None
        return Completion(Ending.COMPLETED, batch.completion_code, url, False)
    return completion_for_newcomer(batch, platform)


def completion_for_newcomer(batch: Batch, platform: str = "") -> Completion:
    """A worker who did nothing (the batch was full when they came): the ``full_code``
    where the batch has one (platforms that require a code), else a request to return
    the study — except for an invitation-link worker, who has nothing to return."""
    if platform == "generic":
        return Completion(Ending.THANKS, None, None, False)
    if platform == "mturk":  # nothing to submit: the HIT goes back (a code would not pay)
        return Completion(Ending.FULL, None, None, True)
    if batch.full_code:
        # no link: the completion URL carries the completion code, which is not theirs
        return Completion(Ending.FULL, batch.full_code, None, False)
    return Completion(Ending.FULL, None, None, True)
