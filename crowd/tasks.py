"""Periodic and queued tasks of the crowd app; each calls the services."""

import logging

from celery import shared_task
from django.conf import settings

from annotation.models import Batch, BatchState
from core.audit import Actor, history, record
from crowd.services import places
from crowd.services.prolific_client import Ambiguous, ProlificClient, ProlificError
from crowd.services.submissions import sync_prolific

logger = logging.getLogger(__name__)
SYNC_ACTOR = Actor("policy: Prolific sync", is_policy=True)
FOLLOW_FAILED = "prolific.failed"


@shared_task(name="crowd.tasks.follow_prolific_study")
def follow_prolific_study(batch_pk: int) -> dict | None:
    batch = Batch.objects.filter(pk=batch_pk).exclude(prolific_study_id="").first()
    if batch is None or not settings.PROLIFIC_API_TOKEN:
        return None
    try:
        return places.follow_batch(
            batch, ProlificClient(), actor=SYNC_ACTOR, places=settings.PROLIFIC_AUTO_PLACES
        )
    except (ProlificError, Ambiguous) as failed:
        logger.warning("Prolific study of %s not updated: %s", batch.slug, failed)
        _record_failure(batch, "the study was not brought in line with the batch", failed)
        return None


def _record_failure(batch: Batch, what: str, failed: Exception) -> None:
    """Put a failure with Prolific in the batch's history, where the admin who published
    or paused it looks (a study id that does not exist, a token refused); once, not every
    minute while it lasts: only when it differs from the last such entry."""
    reason = f"{what}: {failed}"[:2000]
    last = history(batch).filter(action=FOLLOW_FAILED).order_by("-pk").first()
    if last is None or last.reason != reason:
        record(FOLLOW_FAILED, subject=batch, actor=SYNC_ACTOR, reason=reason)


@shared_task(name="crowd.tasks.sync_crowd_platforms")
def sync_crowd_platforms() -> int:
    """Every minute when a token is set: each live or paused Prolific batch is synced and
    its study brought in line (places too with PROLIFIC_AUTO_PLACES)."""
    if not settings.PROLIFIC_API_TOKEN:
        return 0
    synced = 0
    batches = Batch.objects.exclude(prolific_study_id="").filter(
        state__in=[BatchState.LIVE, BatchState.PAUSED]
    )
    for batch in batches.order_by("pk"):
        client = ProlificClient()
        try:
            sync_prolific(batch, client, actor=SYNC_ACTOR)
            places.follow_batch(
                batch, client, actor=SYNC_ACTOR, places=settings.PROLIFIC_AUTO_PLACES
            )
            synced += 1
        except (ProlificError, Ambiguous) as failed:
            logger.warning("Prolific sync of %s failed: %s", batch.slug, failed)
            _record_failure(batch, "the sync failed", failed)
    return synced
