"""Celery tasks of the platform layer. Without REDIS_URL they run in-process."""

import logging

from celery import shared_task

from core.jobs import execution

logger = logging.getLogger(__name__)


@shared_task(name="core.tasks.run_job")
def run_job(job_id: str) -> str:
    try:
        job = execution.run_job(job_id)
    except Exception:
        logger.exception("job %s failed", job_id)
        return "failed"
    return job.state
