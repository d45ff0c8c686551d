"""Celery tasks; each calls one service. Without REDIS_URL they run in-process."""

import logging

from celery import shared_task

from annotation.services import jobs
from annotation.services.batches import record_snapshots
from annotation.services.leasing import expire_leases

logger = logging.getLogger(__name__)


@shared_task(name="annotation.tasks.expire_stale_leases")
def expire_stale_leases() -> int:
    """Periodic safety net: leasing also expires a batch's stale leases on demand."""
    return expire_leases()


@shared_task(name="annotation.tasks.record_batch_statistics")
def record_batch_statistics() -> int:
    return record_snapshots()


@shared_task(name="annotation.tasks.run_job")
def run_job(job_id: str) -> str:
    try:
        job = jobs.run_job(job_id)
    except Exception:
        logger.exception("job %s failed", job_id)
        return "failed"
    return job.state
