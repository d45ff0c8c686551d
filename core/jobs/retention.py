"""Job files are not kept for ever: prepared exports, analysis reports and stored uploads
in the jobs folder (``core.jobs.execution.job_files_dir``) are deleted once they are older
than ``JOB_FILES_RETENTION_DAYS`` (by the time they were last written), by the periodic
task ``core.tasks.delete_old_job_files``.

Kept whatever their age:

* the files of jobs still pending or running (a stored upload waiting for its import, a
  result being written);
* the newest result of each kind of job for each subject (the report a batch's, census's
  or Genie set's page shows, the last export prepared for a batch): a page never loses
  what it shows, and the folder holds at most one old file per kind and subject.

A job whose file is deleted keeps its row (state, result summary, audit trail); its
``result_path`` is emptied and its message says why, so it offers no download any more.
``0`` days turns the deletion off.
"""

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.utils import timezone

from core.jobs.execution import job_files_dir
from core.models import Job

DELETED_MESSAGE = (
    "its file was deleted after {days} days (JOB_FILES_RETENTION_DAYS); run the job again "
    "for a new one"
)


@dataclass(frozen=True)
class RetentionOutcome:
    deleted_files: int
    freed_bytes: int
    jobs_without_file: int


def delete_old_job_files(now=None) -> RetentionOutcome:
    """Delete the job files past their retention (see the module docstring)."""
    days = settings.JOB_FILES_RETENTION_DAYS
    if days <= 0:
        return RetentionOutcome(0, 0, 0)
    folder = job_files_dir()
    cutoff = ((now or timezone.now()) - timedelta(days=days)).timestamp()
    kept = _kept_names(folder)
    deleted: list[str] = []
    freed = 0
    for entry in folder.iterdir():
        if entry.name in kept or entry.is_symlink() or not entry.is_file():
            continue
        size_and_time = entry.stat()
        if size_and_time.st_mtime >= cutoff:
            continue
        try:
            entry.unlink()
        except FileNotFoundError:  # deleted meanwhile (a finished import, another sweep)
            continue
        deleted.append(entry.name)
        freed += size_and_time.st_size
    jobs = Job.objects.filter(result_path__in=deleted).update(
        result_path="", message=DELETED_MESSAGE.format(days=days)
    )
    return RetentionOutcome(len(deleted), freed, jobs)


def _kept_names(folder: Path) -> set[str]:
    """Names in ``folder`` that must stay: unfinished jobs' files and the newest result
    of each (kind, subject)."""
    kept: set[str] = set()
    unfinished = Job.objects.filter(state__in=[Job.State.PENDING, Job.State.RUNNING])
    for params, result_path in unfinished.values_list("params", "result_path"):
        stored = params.get("stored_file") if isinstance(params, dict) else None
        kept.update(_name_in(folder, name) for name in (stored, result_path) if name)
    # newest first, in the order the pages read "the latest" (e.g. ``latest_report``)
    succeeded = (
        Job.objects.filter(state=Job.State.SUCCEEDED)
        .exclude(result_path="")
        .order_by("-finished_at", "-created_at")
        .values_list("kind", "subject_type_id", "subject_id", "result_path")
    )
    seen: set[tuple] = set()
    for kind, subject_type, subject_id, result_path in succeeded.iterator():
        if (kind, subject_type, subject_id) not in seen:
            seen.add((kind, subject_type, subject_id))
            kept.add(_name_in(folder, result_path))
    kept.discard("")
    return kept


def _name_in(folder: Path, path: str) -> str:
    """A job's file as a name in ``folder`` (results are stored by name; a path
    elsewhere is not ours to keep or delete)."""
    candidate = Path(path)
    if not candidate.is_absolute():
        return str(candidate)
    return candidate.name if candidate.parent == folder else ""
