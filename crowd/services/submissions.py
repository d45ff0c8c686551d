"""The platforms' view of each participant, kept in step with the batch.

``apply_status`` is the one place where a platform's word on a submission reaches the
batch: the mirror row (``PlatformSubmission``) is updated and the participation gets
the status; a person who left through the platform (``DEPARTED``) gives back the slot
of their open lease at once (``annotation.services.departures``).
"""

from datetime import datetime

from django.utils import timezone
from django.utils.dateparse import parse_datetime

from annotation.models import Annotator, Batch, Participation
from annotation.services.departures import record_platform_status
from core.audit import Actor
from crowd.models import Platform, PlatformSubmission

# Prolific's statuses of a submission whose participant is no longer working on it
PROLIFIC_DEPARTED = frozenset({"RETURNED", "TIMED-OUT", "REJECTED"})
PROLIFIC_AWAITING_REVIEW = "AWAITING REVIEW"
# MTurk's assignment statuses are Submitted, Approved, Rejected; abandoned and returned
# assignments are not listed by MTurk at all (their leases simply expire)
MTURK_DEPARTED = frozenset({"Rejected"})
MTURK_AWAITING_REVIEW = "Submitted"


def departed_statuses(platform: str) -> frozenset:
    return PROLIFIC_DEPARTED if platform == Platform.PROLIFIC else MTURK_DEPARTED


def participation_of(batch: Batch, platform: str, participant_id: str) -> Participation | None:
    return (
        Participation.objects.filter(
            batch=batch,
            annotator__platform=platform,
            annotator__platform_id=participant_id,
        )
        .select_related("annotator", "batch")
        .first()
    )


def apply_status(
    batch: Batch,
    platform: str,
    *,
    submission_id: str,
    participant_id: str,
    status: str,
    started_at: datetime | None = None,
    completed_at: datetime | None = None,
    hit_id: str = "",
    actor: Actor | None = None,
) -> dict:
    """Store one submission's status and act on it; returns what changed."""
    now = timezone.now()
    PlatformSubmission.objects.update_or_create(
        batch=batch,
        platform=platform,
        submission_id=submission_id,
        defaults={
            "participant_id": participant_id,
            "status": status,
            "started_at": started_at,
            "completed_at": completed_at,
            "hit_id": hit_id,
            "synced_at": now,
        },
    )
    participation = participation_of(batch, platform, participant_id)
    if participation is None:
        return {"participation": False, "released": 0}
    released = record_platform_status(
        participation, status, departed=status in departed_statuses(platform), actor=actor
    )
    return {"participation": True, "released": released}


def sync_prolific(batch: Batch, client, *, actor: Actor | None = None) -> dict:
    """Read every submission of the batch's Prolific study and apply each status."""
    summary = {"submissions": 0, "released": 0, "statuses": {}}
    for submission in client.submissions(batch.prolific_study_id):
        status = str(submission.get("status", ""))
        outcome = apply_status(
            batch,
            Platform.PROLIFIC,
            submission_id=str(submission.get("id", "")),
            participant_id=str(
                submission.get("participant_id") or submission.get("participant") or ""
            ),
            status=status,
            started_at=_moment(submission.get("started_at")),
            completed_at=_moment(submission.get("completed_at")),
            actor=actor,
        )
        summary["submissions"] += 1
        summary["released"] += outcome["released"]
        summary["statuses"][status] = summary["statuses"].get(status, 0) + 1
    return summary


def batches_for_prolific_submission(submission_id: str, participant_id: str) -> list[Batch]:
    """The batches a Prolific submission belongs to: known from a sync, else from the
    ``SESSION_ID`` (Prolific's submission id) the participant's link carried."""
    known = list(
        Batch.objects.filter(
            platform_submissions__platform=Platform.PROLIFIC,
            platform_submissions__submission_id=submission_id,
        )
    )
    if known:
        return known
    annotator = Annotator.objects.filter(
        platform=Annotator.Platform.PROLIFIC, platform_id=participant_id
    ).first()
    if annotator is None:
        return []
    return [
        participation.batch
        for participation in annotator.participations.select_related("batch")
        if (participation.entry_params or {}).get("SESSION_ID") == submission_id
    ]


def _moment(value) -> datetime | None:
    if not value:
        return None
    parsed = parse_datetime(str(value))
    if parsed is not None and timezone.is_naive(parsed):
        parsed = timezone.make_aware(parsed, timezone.utc)
    return parsed
