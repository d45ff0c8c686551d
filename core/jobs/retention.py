"""Job files are not kept for ever: prepared exports, analysis reports and stored uploads
in the jobs folder (``core.jobs.execution.job_files_dir``) are deleted once they are older
than ``JOB_FILES_RETENTION_DAYS`` (by the time they were last written), by the periodic
task ``core.tasks.delete_old_job_files``.

Kept whatever their age:

* the files of jobs still pending or running (a stored upload waiting for its import, a
  result being written);
* the newest result of each kind of job for each subject (the report a batch's, census's,
  corpus's or Genie set's page shows, the last export prepared for a batch): a page never
  loses what it shows, and the folder holds at most one old result per kind and subject.

A job's files are its ``result_path`` and every file named in its ``result["files"]``
(a corpus analysis's per-query table and typicality array beside its report); they are
kept or deleted together. A job whose files are deleted keeps its row (state, result
summary, audit trail); its ``result_path`` is emptied, ``result["files"]`` removed and
its message says why, so it offers no download and names no missing file any more.
``0`` days turns the deletion off.
"""

from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

from django.conf import settings
from django.db.models import Q
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
    deleted: set[str] = set()
    freed = 0
    for entry in folder.iterdir():
        if entry.name in kept:
            continue
        size = _delete(entry, older_than=cutoff)
        if size is not None:
            deleted.add(entry.name)
            freed += size
    # a job that lost one of its files loses the others too, and names none of them
    jobs = 0
    for job in _jobs_naming(folder, deleted):
        for name in _file_names(folder, job.result_path, job.result) - deleted - kept:
            size = _delete(folder / name)
            if size is not None:
                deleted.add(name)
                freed += size
        result = job.result
        if isinstance(result, dict) and "files" in result:
            result = {key: value for key, value in result.items() if key != "files"}
        jobs += Job.objects.filter(pk=job.pk).update(
            result_path="", result=result, message=DELETED_MESSAGE.format(days=days)
        )
    return RetentionOutcome(len(deleted), freed, jobs)


def _delete(entry: Path, older_than: float | None = None) -> int | None:
    """Delete a regular file (written before ``older_than``, when given); its size, or
    None when it was left alone or is already gone."""
    if entry.is_symlink() or not entry.is_file():
        return None
    size_and_time = entry.stat()
    if older_than is not None and size_and_time.st_mtime >= older_than:
        return None
    try:
        entry.unlink()
    except FileNotFoundError:  # deleted meanwhile (a finished import, another sweep)
        return None
    return size_and_time.st_size


def _jobs_naming(folder: Path, names: set[str]) -> list[Job]:
    """The jobs one of whose files (``result_path``, ``result["files"]``) is in ``names``."""
    if not names:
        return []
    candidates = Job.objects.filter(Q(result_path__in=names) | Q(result__has_key="files")).only(
        "pk", "result_path", "result"
    )
    return [
        job
        for job in candidates.iterator()
        if _file_names(folder, job.result_path, job.result) & names
    ]


def _file_names(folder: Path, result_path: str, result) -> set[str]:
    """A job's files as names in ``folder``: its result and those its result lists."""
    listed = result.get("files") if isinstance(result, dict) else None
    paths = [result_path, *(listed.values() if isinstance(listed, dict) else ())]
    names = {_name_in(folder, path) for path in paths if isinstance(path, str) and path}
    names.discard("")
    return names


def _kept_names(folder: Path) -> set[str]:
    """Names in ``folder`` that must stay: unfinished jobs' files and the newest result
    (with the files it lists) of each (kind, subject)."""
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
        .values_list("kind", "subject_type_id", "subject_id", "result_path", "result")
    )
    seen: set[tuple] = set()
    for kind, subject_type, subject_id, result_path, result in succeeded.iterator():
        if (kind, subject_type, subject_id) not in seen:
            seen.add((kind, subject_type, subject_id))
            kept.update(_file_names(folder, result_path, result))
    kept.discard("")
    return kept


def _name_in(folder: Path, path: str) -> str:
    """A job's file as a name in ``folder`` (results are stored by name; a path
    elsewhere is not ours to keep or delete)."""
    candidate = Path(path)
    if not candidate.is_absolute():
        return str(candidate)
    return candidate.name if candidate.parent == folder else ""
