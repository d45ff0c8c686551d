"""Celery tasks of the platform layer. Without REDIS_URL they run in-process.

None keeps a result in the broker: the ``Job`` row holds a job's state and outcome.

A job whose worker process dies under it (``kill -9``, the kernel's out-of-memory killer)
cannot record its own failure: the Celery worker's main process sees the child die
(``WorkerLostError``) and sends ``task_failure``, and ``fail_job_of_lost_worker`` fails the
job there and then, which releases what it held (one embeddings job per corpus). Its
message is not redelivered (no ``acks_late``): a job that killed its worker would kill the
next one too. When the main process dies as well, the job's heartbeat stops and the
periodic ``fail_stale_jobs`` fails it (``core.jobs.heartbeat``).
"""

import logging
from importlib import import_module

from billiard.exceptions import WorkerLostError
from celery import shared_task
from celery.signals import task_failure
from django.conf import settings

from core.jobs import execution, retention, staleness

logger = logging.getLogger(__name__)


@shared_task(name="core.tasks.run_job", ignore_result=True, bind=True)
def run_job(self, job_id: str) -> str:
    try:
        # in a worker (not eager, not called as a function) a thread beside the job says
        # it is alive (core.jobs.heartbeat)
        in_worker = not (self.request.is_eager or self.request.called_directly)
        job = execution.run_job(job_id, heartbeat=in_worker)
    except Exception:
        logger.exception("job %s failed", job_id)
        return "failed"
    return job.state


@task_failure.connect
def fail_job_of_lost_worker(sender=None, exception=None, args=None, **_) -> None:
    """In the worker's main process: the child running a job died, so fail the job."""
    if getattr(sender, "name", None) != "core.tasks.run_job" or not args:
        return
    if isinstance(exception, WorkerLostError):
        logger.error("job %s lost its worker: %s", args[0], exception)
        execution.fail_lost_job(str(args[0]), str(exception))


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
