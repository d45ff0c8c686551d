"""A worker opening a study link: who they are, whether they may start, which page next.

``enter`` is the entry page's whole decision, made *before* any consent:

* the batch's expired leases are given back first, so an expired lease never makes the
  batch look full;
* an unknown worker arriving when nothing is left for them is told so and does not even
  join the batch; one arriving while every slot they could take is held by another
  worker's live lease (``Page.WAIT``), or while the batch's cap on concurrent workers is
  reached (``Page.BUSY``), is asked to wait — the page asks again by itself after
  ``retry_after`` seconds, for up to the batch's ``wait_for_release_seconds`` — and is
  not joined either until there is work for them;
* too many new entries from one client address in an hour (``ENTRY_RATE_LIMIT_PER_HOUR``,
  0 = off) are refused, so one client cannot mint many "independent" annotators;
* a participation is bound to the browser that opened it (a key kept in that browser's
  session): the same worker id opened in a second browser gets its own page, where the
  worker can continue there (``take_over``: the first browser's lease is released) or
  stop; each switch is recorded and counted;
* otherwise: consent (if the batch has a consent text), the background questionnaire (if
  any), then the rating page; a screened-out worker gets the screen-out page, a worker
  with nothing left their completion page.
"""

from dataclasses import dataclass

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import Assignment, AssignmentState, Batch, Participation
from annotation.services import admission
from annotation.services.admission import Admission
from annotation.services.annotators import identify_annotator, join_batch
from annotation.services.leasing import LEASE_FIELDS, expire_leases, release_leases
from annotation.services.work_state import read_entry_state
from core import audit, ratelimit
from core.audit import Actor
from core.locking import lock_rows


class Page:
    CONSENT = "consent"
    QUESTIONNAIRE = "questionnaire"
    TASK = "task"
    FULL = "full"
    WAIT = "wait"
    BUSY = "busy"
    DONE = "done"
    SCREENED_OUT = "screened_out"
    ELSEWHERE = "elsewhere"
    LIMITED = "limited"


@dataclass(frozen=True)
class EntryDecision:
    page: str
    participation: Participation | None
    done: int = 0
    retry_after: int | None = None  # Page.WAIT and Page.BUSY: when to ask again


def enter(
    batch: Batch,
    platform: str,
    worker_id: str,
    entry_params: dict,
    *,
    browser_key: str,
    client_ip: str | None = None,
    device_id: str = "",
    language: str = "",
) -> EntryDecision:
    """Identify the worker and decide the page they see (see the module docstring).

    What the decision needs is read in one query (``read_entry_state``); a newcomer is
    joined with this browser's key and their ``language`` (the batch's language their
    browser asks for) in the one statement that records them."""
    annotator = identify_annotator(platform, worker_id)
    now = timezone.now()
    known = read_entry_state(batch, annotator.pk, now)
    if known.stale_leases:
        expire_leases(batch=batch, now=now)
        known = read_entry_state(batch, annotator.pk, now)
    participation = known.participation
    if participation is None:
        newcomer = Participation(batch=batch, annotator=annotator)
        decision = admission.admit(batch, newcomer, now, known=known)
        if decision == Admission.FULL:
            return EntryDecision(Page.FULL, None)
        if decision == Admission.WAIT:
            retry = admission.held_retry_after(batch, annotator.pk, now)
            return EntryDecision(Page.WAIT, None, retry_after=retry)
        if decision == Admission.BUSY:
            return EntryDecision(
                Page.BUSY, None, retry_after=admission.busy_retry_after(batch, now)
            )
        if _over_entry_limit(client_ip):
            return EntryDecision(Page.LIMITED, None)
        participation = join_batch(
            batch,
            annotator,
            entry_params,
            client_ip=client_ip,
            device_id=device_id,
            browser_key=browser_key,
            language=language,
        )
    participation.annotator = annotator  # read above: the pages ask for its platform
    if not participation.browser_key:
        participation = _bind(participation, browser_key)
    if participation.browser_key != browser_key:
        return EntryDecision(Page.ELSEWHERE, participation)
    return EntryDecision(
        next_page(batch, participation, known=known),
        participation,
        _done(batch, participation),
    )


def next_page(batch: Batch, participation: Participation, *, known=None) -> str:
    """Where a worker who entered goes now. One who already joined and must wait for a
    slot goes on to the rating page, which waits and asks again by itself. ``known``: the
    ``EntryState`` read in this request, if any."""
    decision = admission.admit(batch, participation, known=known)
    if decision == Admission.EXCLUDED:
        return Page.SCREENED_OUT
    if decision in (Admission.DONE, Admission.QUOTA, Admission.FULL):
        return Page.DONE
    if admission.needs_consent(batch, participation):
        return Page.CONSENT
    if admission.needs_questionnaire(batch, participation):
        return Page.QUESTIONNAIRE
    if decision == Admission.BUSY:
        return Page.BUSY
    return Page.TASK


def take_over(batch: Batch, participation: Participation, browser_key: str) -> Participation:
    """Continue in this browser: bind the participation to it and release the lease the
    other browser held (its item goes back to the pool). Recorded in the audit trail."""
    with transaction.atomic():
        participation = lock_rows(Participation.objects.filter(pk=participation.pk)).get()
        if participation.browser_key == browser_key:
            return participation
        open_leases = list(
            lock_rows(
                Assignment.objects.filter(
                    batch=batch,
                    annotator_id=participation.annotator_id,
                    state=AssignmentState.OPEN,
                )
            ).values_list(*LEASE_FIELDS)
        )
        if open_leases:
            release_leases(open_leases)
        participation.browser_key = browser_key
        participation.browser_switches += 1
        participation.save(update_fields=["browser_key", "browser_switches"])
        audit.record(
            "participation.browser_switch",
            subject=batch,
            actor=Actor("worker"),
            changes={
                "annotator": participation.annotator.pseudonym,
                "switches": participation.browser_switches,
                "lease_released": bool(open_leases),
            },
        )
    return participation


def _bind(participation: Participation, browser_key: str) -> Participation:
    """The first browser to open a participation owns it (race-safe: first one wins)."""
    Participation.objects.filter(pk=participation.pk, browser_key="").update(
        browser_key=browser_key
    )
    participation.refresh_from_db(fields=["browser_key"])
    return participation


def _done(batch: Batch, participation: Participation) -> int:
    return participation.regular_labels


def _over_entry_limit(client_ip: str | None) -> bool:
    limit = getattr(settings, "ENTRY_RATE_LIMIT_PER_HOUR", 0)
    if not limit or not client_ip:
        return False
    return ratelimit.hit("study-entry", client_ip, 3600) > limit
