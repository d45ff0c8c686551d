"""Long operations as jobs: recorded with state and progress, run by Celery.

``start_job`` records a ``Job`` and hands its id to the ``annotation.tasks.run_job``
task once the transaction commits. With ``REDIS_URL`` set a worker process runs it;
without, Celery runs it in-process (eager) before ``start_job`` returns. Runners are
plain functions registered per kind; they report progress through ``JobProgress`` and
return ``(result dict, result file path or "")``.
"""

import time
from collections.abc import Callable
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from annotation.models import Batch, Job
from annotation.services.errors import ServiceError

Runner = Callable[[Job, "JobProgress"], tuple[dict, str]]
_RUNNERS: dict[str, Runner] = {}

PROGRESS_WRITE_INTERVAL_S = 0.5


def register_runner(kind: str) -> Callable[[Runner], Runner]:
    def decorate(runner: Runner) -> Runner:
        _RUNNERS[kind] = runner
        return runner

    return decorate


def job_files_dir() -> Path:
    folder = Path(settings.DATA_DIR) / "jobs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


class JobProgress:
    """Writes progress to the job row, at most every half second (and at the end)."""

    def __init__(self, job: Job):
        self.job = job
        self._last_write = 0.0

    def __call__(self, done: int, total: int | None = None, message: str = "") -> None:
        now = time.monotonic()
        finished = total is not None and done >= total
        if not finished and now - self._last_write < PROGRESS_WRITE_INTERVAL_S:
            return
        self._last_write = now
        fields = {"progress": done}
        if total is not None:
            fields["total"] = total
        if message:
            fields["message"] = message
        Job.objects.filter(pk=self.job.pk).update(**fields)


def start_job(kind: str, batch: Batch, params: dict | None = None, user=None) -> Job:
    from annotation.tasks import run_job

    if kind not in _RUNNERS:
        raise ValueError(f"no runner registered for job kind {kind!r}")
    job = Job.objects.create(
        kind=kind,
        batch=batch,
        params=params or {},
        created_by=user if user is not None and user.is_authenticated else None,
    )
    transaction.on_commit(lambda: run_job.delay(str(job.pk)))
    job.refresh_from_db()
    return job


def run_job(job_id: str) -> Job:
    """Execute a recorded job (called by the Celery task); failures are recorded."""
    job = Job.objects.get(pk=job_id)
    if job.state != Job.State.PENDING:
        return job  # delivered twice: the first delivery owns it
    job.state = Job.State.RUNNING
    job.started_at = timezone.now()
    job.save(update_fields=["state", "started_at"])
    try:
        result, result_path = _RUNNERS[job.kind](job, JobProgress(job))
    except ServiceError as error:  # the user's input was refused: say why, no traceback
        _record_failure(job, str(error), getattr(error, "problems", None))
        return job
    except Exception as error:  # recorded for the user; the traceback goes to the log
        _record_failure(job, f"{type(error).__name__}: {error}", None)
        raise
    job.refresh_from_db(fields=["progress", "total"])
    job.state = Job.State.SUCCEEDED
    job.result = result
    job.result_path = result_path
    job.finished_at = timezone.now()
    if job.total is not None:
        job.progress = job.total
    job.save(update_fields=["state", "result", "result_path", "finished_at", "progress"])
    return job


def _record_failure(job: Job, message: str, problems: list[str] | None) -> None:
    job.state = Job.State.FAILED
    job.message = message
    job.result = {"problems": problems} if problems else None
    job.finished_at = timezone.now()
    job.save(update_fields=["state", "message", "result", "finished_at"])
