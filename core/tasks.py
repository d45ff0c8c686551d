"""Celery tasks of the platform layer. Without REDIS_URL they run in-process.

None keeps a result in the broker: the ``Job`` row holds a job's state and outcome.
"""

import logging
from importlib import import_module

from celery import shared_task
from django.conf import settings

from core.jobs import execution, retention, staleness

logger = logging.getLogger(__name__)


@shared_task(name="core.tasks.run_job", ignore_result=True)
def run_job(job_id: str) -> str:
    try:
        job = execution.run_job(job_id)
    except Exception:
        logger.exception("job %s failed", job_id)
        return "failed"
    return job.state


@shared_task(name="core.tasks.fail_stale_jobs", ignore_result=True)
def fail_stale_jobs() -> int:
    """Periodic: no job stays pending or running past its bound (``core.jobs.staleness``)."""
    return staleness.fail_stale_jobs()


@shared_task(name="core.tasks.clear_expired_sessions", ignore_result=True)
def clear_expired_sessions() -> None:
    """Periodic: delete expired sessions (every crowdworker entry opens one)."""
    import_module(settings.SESSION_ENGINE).SessionStore.clear_expired()


@shared_task(name="core.tasks.delete_old_job_files", ignore_result=True)
def delete_old_job_files() -> int:
    """Periodic: job files past ``JOB_FILES_RETENTION_DAYS`` (``core.jobs.retention``);
    returns how many were deleted."""
    outcome = retention.delete_old_job_files()
    if outcome.deleted_files:
        logger.info(
            "deleted %d job files (%d bytes) older than %d days",
            outcome.deleted_files,
            outcome.freed_bytes,
            settings.JOB_FILES_RETENTION_DAYS,
        )
    return outcome.deleted_files
