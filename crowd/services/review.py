"""Reviewing submissions: what to do with each one awaiting review, and doing it once.

The rules (docs/SPEC.md, "Crowd platforms"), for a submission awaiting review (Prolific
``AWAITING REVIEW``, MTurk ``Submitted``):

* **approve** — the participant did at least one regular item and is not excluded;
* **screen out** (Prolific) — excluded automatically by the batch's checks (attention
  checks or the flag policy): Prolific pays the study's fixed screen-out payment;
* **reject** — only when asked for (``reject_failed_checks``) and only for someone who
  failed at least ``PROLIFIC_MIN_FAILED_CHECKS`` attention checks, Prolific's rule for
  rejecting on attention checks; never for disagreeing with the crowd. On MTurk,
  which has no screen-out, this is the only automatic action for the excluded;
* **leave for manual review** — everything else: excluded by a person, no item done,
  no record of the participant here, or excluded on MTurk without ``reject_failed_checks``.

Applying: the statuses are synced first; each submission's decision is stored
(``ReviewDecision``, one per submission) before its call and marked done after, so a
re-run — or a second person pressing the button — never acts twice; a call whose answer
was lost is retried only while the platform still shows the submission awaiting review
(a second transition of a decided submission is refused by the platform anyway).
"""

from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass

from django.db import transaction
from django.db.models import Count, Q
from django.utils.translation import gettext_lazy

from annotation.models import REGULAR_STATUSES, Batch, Label, LabelStatus, Participation
from core import audit
from core.audit import Actor
from crowd.models import Platform, PlatformSubmission, ReviewAction, ReviewDecision
from crowd.services.submissions import MTURK_AWAITING_REVIEW, PROLIFIC_AWAITING_REVIEW

PROLIFIC_MIN_FAILED_CHECKS = 2
BULK_APPROVE_CHUNK = 500
# shown to the participant on Prolific (at least 100 characters, as Prolific requires)
REJECTION_MESSAGE = gettext_lazy(
    "Your submission failed %(failed)s of the study's attention checks, which were stated in "
    "the instructions and followed the platform's rules for attention checks; we are "
    "therefore unable to approve it."
)
AWAITING = {Platform.PROLIFIC: PROLIFIC_AWAITING_REVIEW, Platform.MTURK: MTURK_AWAITING_REVIEW}


@dataclass(frozen=True)
class Proposal:
    submission_id: str
    participant_id: str
    annotator: str  # pseudonym, or "" when the participant never reached the batch
    status: str
    items_done: int
    checks_failed: int
    action: str
    reason: str
    state: str  # the decision's state so far ("" when nothing was sent)


def propose(batch: Batch, platform: str, *, reject_failed_checks: bool = False) -> list[Proposal]:
    """A proposal for every submission of the batch awaiting review (as last synced)."""
    settle_sent_decisions(batch, platform)
    awaiting = list(
        PlatformSubmission.objects.filter(
            batch=batch, platform=platform, status=AWAITING[platform]
        ).order_by("submission_id")
    )
    ids = [submission.participant_id for submission in awaiting]
    participations = {
        p.annotator.platform_id: p
        for p in Participation.objects.filter(
            batch=batch, annotator__platform=platform, annotator__platform_id__in=ids
        ).select_related("annotator")
    }
    counts = _label_counts(batch, [p.annotator_id for p in participations.values()])
    decisions = {
        d.submission_id: d
        for d in ReviewDecision.objects.filter(
            batch=batch, platform=platform, submission_id__in=[s.submission_id for s in awaiting]
        )
    }
    proposals = []
    for submission in awaiting:
        participation = participations.get(submission.participant_id)
        done, failed = counts.get(participation.annotator_id if participation else None, (0, 0))
        action, reason = _decide(platform, participation, done, failed, reject_failed_checks)
        decision = decisions.get(submission.submission_id)
        proposals.append(
            Proposal(
                submission_id=submission.submission_id,
                participant_id=submission.participant_id,
                annotator=participation.annotator.pseudonym if participation else "",
                status=submission.status,
                items_done=done,
                checks_failed=failed,
                action=action,
                reason=reason,
                state=decision.state if decision and decision.action == action else "",
            )
        )
    return proposals


def _decide(platform, participation, done: int, failed: int, reject_failed_checks: bool):
    if participation is None:
        return ReviewAction.MANUAL, "no record of this participant in the batch"
    if participation.status == Participation.Status.EXCLUDED:
        if not participation.excluded_automatically:
            return ReviewAction.MANUAL, (
                f"excluded by staff ({participation.exclusion_reason or 'no reason given'}): "
                "decide on pay by hand"
            )
        if reject_failed_checks and failed >= PROLIFIC_MIN_FAILED_CHECKS:
            return ReviewAction.REJECT, (
                f"failed {failed} attention checks (rejection allowed from "
                f"{PROLIFIC_MIN_FAILED_CHECKS} failed checks)"
            )
        if platform == Platform.PROLIFIC:
            return ReviewAction.SCREEN_OUT, (
                f"excluded by the batch's checks: {participation.exclusion_reason}"
            )
        return ReviewAction.MANUAL, (
            f"excluded by the batch's checks ({participation.exclusion_reason}); MTurk has no "
            "screen-out: pay or reject by hand"
        )
    if done >= 1:
        return ReviewAction.APPROVE, f"did {done} item{'s' if done != 1 else ''}, not excluded"
    return ReviewAction.MANUAL, "did no item"


def _label_counts(batch: Batch, annotator_ids: list[int]) -> dict[int, tuple[int, int]]:
    rows = (
        Label.objects.filter(batch=batch, annotator_id__in=annotator_ids)
        .values("annotator_id")
        .annotate(
            done=Count("pk", filter=Q(status__in=REGULAR_STATUSES)),
            failed=Count("pk", filter=Q(status=LabelStatus.CHECK, check_passed=False)),
        )
    )
    return {row["annotator_id"]: (row["done"], row["failed"]) for row in rows}


def settle_sent_decisions(batch: Batch, platform: str) -> int:
    """Decisions whose answer was lost, for submissions the platform no longer shows
    awaiting review: they took effect (or someone acted on the platform) — done."""
    still_awaiting = PlatformSubmission.objects.filter(
        batch=batch, platform=platform, status=AWAITING[platform]
    ).values("submission_id")
    return (
        ReviewDecision.objects.filter(
            batch=batch, platform=platform, state=ReviewDecision.State.SENT
        )
        .exclude(submission_id__in=still_awaiting)
        .update(state=ReviewDecision.State.DONE, detail="settled by a later sync")
    )


def actionable(proposals: list[Proposal]) -> dict[str, list[Proposal]]:
    """The proposals to act on, by action (manual ones and those done are left out)."""
    grouped = defaultdict(list)
    for proposal in proposals:
        if proposal.action != ReviewAction.MANUAL and proposal.state != ReviewDecision.State.DONE:
            grouped[proposal.action].append(proposal)
    return grouped


def mark_sent(batch: Batch, platform: str, proposals: list[Proposal], actor: Actor) -> None:
    """Store the intent before the call (committed: a crash leaves a trace)."""
    with transaction.atomic():
        for proposal in proposals:
            ReviewDecision.objects.update_or_create(
                batch=batch,
                platform=platform,
                submission_id=proposal.submission_id,
                defaults={
                    "participant_id": proposal.participant_id,
                    "action": proposal.action,
                    "reason": proposal.reason,
                    "state": ReviewDecision.State.SENT,
                    "detail": "",
                    "decided_by": actor.name[:200],
                },
            )


def mark_outcome(
    batch: Batch,
    platform: str,
    proposals: list[Proposal],
    *,
    state: str,
    actor: Actor,
    new_status: str = "",
    detail: str = "",
) -> None:
    """After the call: done (with the submission's new status) or refused; audited."""
    if not proposals:
        return
    ids = [proposal.submission_id for proposal in proposals]
    with transaction.atomic():
        ReviewDecision.objects.filter(batch=batch, platform=platform, submission_id__in=ids).update(
            state=state, detail=detail[:2000]
        )
        if state == ReviewDecision.State.DONE and new_status:
            PlatformSubmission.objects.filter(
                batch=batch, platform=platform, submission_id__in=ids
            ).update(status=new_status)
        action = proposals[0].action
        audit.record(
            f"{platform}.{action}"
            if state == ReviewDecision.State.DONE
            else f"{platform}.{action}.refused",
            subject=batch,
            actor=actor,
            changes={
                "submissions": ids,
                "annotators": [p.annotator for p in proposals if p.annotator],
            },
            reason="; ".join(sorted({p.reason for p in proposals}))[:2000]
            + (f" — {detail}" if detail else ""),
        )


# How a platform call about some submissions ended, by its error: ``refused`` (the platform
# answered no: the decisions are marked failed), ``unknown`` (no answer: they stay "sent",
# and the next sync settles them), or ``None`` for an error the caller does not expect.
Verdict = Callable[[Exception], str | None]


def send_decision(
    batch: Batch,
    platform: str,
    proposals: list[Proposal],
    actor: Actor,
    outcome: dict,
    *,
    call: Callable[[], object],
    verdict: Verdict,
    counter: str,
    new_status: str,
) -> None:
    """Carry out one platform call about ``proposals`` once: the intent is stored first
    (``mark_sent``), then the call is made and how it ended is recorded (``mark_outcome``)
    and counted in ``outcome`` — under ``counter`` when done, else "refused" or "unknown"
    as ``verdict`` says of the error."""
    mark_sent(batch, platform, proposals, actor)
    try:
        call()
    except Exception as error:
        ended = verdict(error)
        if ended is None:
            raise
        if ended == "refused":
            mark_outcome(batch, platform, proposals, state="failed", actor=actor, detail=str(error))
        outcome[ended] += len(proposals)
        return
    mark_outcome(batch, platform, proposals, state="done", actor=actor, new_status=new_status)
    outcome[counter] += len(proposals)


def apply_prolific(
    batch: Batch, client, *, actor: Actor, reject_failed_checks: bool = False
) -> dict:
    """Sync, then approve (bulk), screen out and reject (one transition each)."""
    from crowd.services.prolific_client import Ambiguous, ProlificError
    from crowd.services.submissions import sync_prolific

    sync_prolific(batch, client, actor=actor)
    grouped = actionable(
        propose(batch, Platform.PROLIFIC, reject_failed_checks=reject_failed_checks)
    )
    outcome = {"approved": 0, "screened_out": 0, "rejected": 0, "refused": 0, "unknown": 0}
    approvals = grouped.get(ReviewAction.APPROVE, [])

    def verdict(error: Exception) -> str | None:
        if isinstance(error, ProlificError):
            return "refused"
        return "unknown" if isinstance(error, Ambiguous) else None

    for start in range(0, len(approvals), BULK_APPROVE_CHUNK):
        chunk = approvals[start : start + BULK_APPROVE_CHUNK]
        send_decision(
            batch,
            Platform.PROLIFIC,
            chunk,
            actor,
            outcome,
            call=lambda chunk=chunk: client.bulk_approve(
                batch.prolific_study_id, [p.submission_id for p in chunk]
            ),
            verdict=verdict,
            counter="approved",
            new_status="APPROVED",
        )
    singles = [
        (ReviewAction.SCREEN_OUT, "SCREEN_OUT", "SCREENED OUT", "screened_out"),
        (ReviewAction.REJECT, "REJECT", "REJECTED", "rejected"),
    ]
    for action, verb, new_status, counter in singles:
        for proposal in grouped.get(action, []):
            fields = {}
            if action == ReviewAction.REJECT:
                fields = {
                    "message": str(REJECTION_MESSAGE) % {"failed": proposal.checks_failed},
                    "rejection_category": "FAILED_CHECK",
                }
            send_decision(
                batch,
                Platform.PROLIFIC,
                [proposal],
                actor,
                outcome,
                call=lambda proposal=proposal, verb=verb, fields=fields: (
                    client.transition_submission(proposal.submission_id, verb, **fields)
                ),
                verdict=verdict,
                counter=counter,
                new_status=new_status,
            )
    return outcome
