"""Running a recorded job: state, progress and failures written to its ``Job`` row."""

import json
import shutil
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from core.errors import ServiceError
from core.jobs.heartbeat import JobHeartbeat
from core.jobs.kinds import job_kind
from core.models import Job

PROGRESS_WRITE_INTERVAL_S = 0.5


def job_files_dir() -> Path:
    """Where jobs keep their files (exports, reports, stored uploads)."""
    folder = Path(settings.DATA_DIR) / "jobs"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def newest_report_job(subject, kind: str) -> Job | None:
    """The newest succeeded ``kind`` job of ``subject`` whose JSON result file still exists
    (without reading it: a large batch's report takes a while to parse)."""
    jobs = subject.jobs.filter(kind=kind, state=Job.State.SUCCEEDED).order_by("-finished_at")
    for job in jobs[:5]:  # a newer one whose file is gone gives way to an older one
        path = job_files_dir() / job.result_path if job.result_path else None
        if path is not None and path.exists():
            return job
    return None


def newest_report(subject, kind: str) -> tuple[Job, dict] | None:
    """The newest succeeded ``kind`` job of ``subject`` whose JSON result file still
    exists, and that report; ``None`` when there is none."""
    job = newest_report_job(subject, kind)
    if job is None:
        return None
    return job, job_report(job)


def job_report(job: Job) -> dict:
    """The JSON report a succeeded job kept as its result file."""
    with open(job_files_dir() / job.result_path, encoding="utf-8") as stream:
        return json.load(stream)


def store_upload(upload, extension: str) -> str:
    """Copy an uploaded file into the jobs folder under a new name (a job reads it later,
    in another process); returns that name. The caller has checked the file's type."""
    stored = f"upload-{uuid.uuid4().hex}.{extension}"
    with open(job_files_dir() / stored, "wb") as target:
        shutil.copyfileobj(upload, target, length=1024 * 1024)
    return stored


@contextmanager
def stored_upload(params: dict) -> Iterator[Path]:
    """The file ``store_upload`` kept for a job (its ``params["stored_file"]``), removed
    once the job has used it, whatever the outcome: an upload is kept only until its job
    has run."""
    stored = job_files_dir() / params["stored_file"]
    try:
        yield stored
    finally:
        stored.unlink(missing_ok=True)


class JobProgress:
    """Writes progress to the job row, at most every half second (and at the end), with the
    time of the write (``last_progress_at``: a job that reports progress is not stale)."""

    def __init__(self, job: Job):
        self.job = job
        self._last_write = 0.0

    def __call__(self, done: int, total: int | None = None, message: str = "") -> None:
        now = time.monotonic()
        finished = total is not None and done >= total
        if not finished and now - self._last_write < PROGRESS_WRITE_INTERVAL_S:
            return
        self._last_write = now
        fields = {"progress": done, "last_progress_at": timezone.now()}
        if total is not None:
            fields["total"] = total
        if message:
            fields["message"] = message
        Job.objects.filter(pk=self.job.pk).update(**fields)


def run_job(job_id: str, heartbeat: bool = False) -> Job:
    """Execute a recorded job (called by the Celery task); failures are recorded. With
    ``heartbeat`` (in a Celery worker) a thread says the job is alive while it runs
    (``core.jobs.heartbeat``)."""
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
        state=job.state,
        started_at=job.started_at,
        last_progress_at=job.started_at,
        alive_at=job.started_at if heartbeat else None,
    )
    if not claimed:
        job.refresh_from_db()
        return job
    # in a worker, a kind whose parts may run on several workers hands them over and the
    # workers finish the job (core.jobs.chunks); anywhere else its runner runs them here
    distributed = heartbeat and kind.chunked is not None and kind.chunked.splits(job)
    try:
        with JobHeartbeat(job.pk) if heartbeat else nullcontext():
            if distributed:
                kind.chunked.dispatch(job)
            else:
                result, result_path = kind.runner(job, JobProgress(job))
    except ServiceError as error:  # the user's input was refused: say why, no traceback
        record_failure(job, str(error), getattr(error, "problems", None))
        return job
    except Exception as error:  # recorded for the user; the traceback goes to the log
        record_failure(job, f"{type(error).__name__}: {error}")
        raise
    if distributed:
        # its chunks say they are alive from now on, each on its own row
        Job.objects.filter(pk=job.pk, state=Job.State.RUNNING).update(alive_at=None)
    else:
        record_success(job.pk, result, result_path)
    job.refresh_from_db()
    return job


def record_success(job_id, result: dict, result_path: str) -> bool:
    """Mark a running job succeeded with its result; whether it was (a job failed as stale
    meanwhile stays failed: its user was told to start it again; a finished state is never
    overwritten)."""
    counts = Job.objects.filter(pk=job_id).values_list("progress", "total").first()
    progress, total = counts if counts is not None else (0, None)
    finished = {
        "state": Job.State.SUCCEEDED,
        "result": result,
        "result_path": result_path,
        "finished_at": timezone.now(),
        "progress": total if total is not None else progress,
        # the message said what the job was doing ("Reading the replies"); it is done
        "message": "",
    }
    return bool(Job.objects.filter(pk=job_id, state=Job.State.RUNNING).update(**finished))


LOST_WORKER = (
    "the worker process running this job died ({reason}; killed, or out of memory); "
    "nothing it did was kept. Start it again; if it dies again, the input is likely too "
    "large for the worker's memory"
)


def fail_lost_job(job_id: str, reason: str) -> bool:
    """Fail a pending or running job whose worker process died; whether it was failed (a
    finished job stays as it ended)."""
    return fail_running_job(job_id, LOST_WORKER.format(reason=reason.strip() or "WorkerLostError"))


def fail_running_job(job_id, message: str, problems: list[str] | None = None) -> bool:
    """Fail a job that is still pending or running (a finished one stays as it ended);
    whether it was failed."""
    unfinished = (Job.State.PENDING, Job.State.RUNNING)
    return bool(
        Job.objects.filter(pk=job_id, state__in=unfinished).update(
            state=Job.State.FAILED,
            message=message,
            result={"problems": problems} if problems else None,
            finished_at=timezone.now(),
        )
    )


def record_failure(job: Job, message: str, problems: list[str] | None = None) -> None:
    job.state = Job.State.FAILED
    job.message = message
    job.result = {"problems": problems} if problems else None
    job.finished_at = timezone.now()
    job.save(update_fields=["state", "message", "result", "finished_at"])
