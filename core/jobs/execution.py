"""Running a recorded job: state, progress and failures written to its ``Job`` row."""

import time
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from core.errors import ServiceError
from core.jobs.kinds import job_kind
from core.models import Job

PROGRESS_WRITE_INTERVAL_S = 0.5


def job_files_dir() -> Path:
    """Where jobs keep their files (exports, reports, stored uploads)."""
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


def run_job(job_id: str) -> Job:
    """Execute a recorded job (called by the Celery task); failures are recorded."""
    job = Job.objects.get(pk=job_id)
    if job.state != Job.State.PENDING:
        return job  # delivered twice: the first delivery owns it
    kind = job_kind(job.kind)
    if kind is None:
        record_failure(job, f"no runner is registered for job kind {job.kind!r}")
        return job
    job.state = Job.State.RUNNING
    job.started_at = timezone.now()
    # Conditional: a job failed as stale (core.jobs.staleness) meanwhile is not run.
    claimed = Job.objects.filter(pk=job.pk, state=Job.State.PENDING).update(
        state=job.state, started_at=job.started_at
    )
    if not claimed:
        job.refresh_from_db()
        return job
    try:
        result, result_path = kind.runner(job, JobProgress(job))
    except ServiceError as error:  # the user's input was refused: say why, no traceback
        record_failure(job, str(error), getattr(error, "problems", None))
        return job
    except Exception as error:  # recorded for the user; the traceback goes to the log
        record_failure(job, f"{type(error).__name__}: {error}")
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


def record_failure(job: Job, message: str, problems: list[str] | None = None) -> None:
    job.state = Job.State.FAILED
    job.message = message
    job.result = {"problems": problems} if problems else None
    job.finished_at = timezone.now()
    job.save(update_fields=["state", "message", "result", "finished_at"])
