"""The ``import`` job: a big items file imported in the background.

The upload is first saved to the jobs folder (``save_upload``); the runner then imports
it with ``import_items`` — the same validation and all-or-nothing write as everywhere —
and deletes the saved copy. A rejected file fails the job with its problem lines in
``Job.result["problems"]``.
"""

from dataclasses import dataclass
from datetime import timedelta

from django.utils import timezone

from annotation.access import can_manage_batches
from annotation.services.importing import import_items
from core.audit import Actor
from core.jobs.execution import JobProgress, store_upload, stored_upload
from core.jobs.kinds import register_job_kind
from core.jobs.queue import start_job
from core.models import Job
from core.tabular import format_of


def save_upload(upload, filename: str) -> str:
    """Store an uploaded file for an import job; returns its name in the jobs folder."""
    return store_upload(upload, format_of(filename))  # the type is checked first


# How long the batch page keeps telling of a background import that has ended.
SHOWN_AFTER_THE_END = timedelta(hours=24)


def start_import_job(batch, upload, user) -> Job:
    """Save ``upload`` and import it into ``batch`` as a job (for files too big for one
    request: ``SYNC_IMPORT_MAX_BYTES``); without a broker the job has run when this
    returns. Refuses a file of an unknown type at once (``ImportRejected``)."""
    stored = save_upload(upload, upload.name)
    return start_job("import", batch, {"stored_file": stored, "filename": upload.name}, user)


@dataclass(frozen=True)
class BackgroundImport:
    """What the batch page says of its newest background import."""

    filename: str
    state: str
    started_at: object
    finished_at: object
    result: dict
    problems: list[str]


def newest_background_import(batch) -> BackgroundImport | None:
    """The batch's newest import job while it runs, or for a day after it ended."""
    job = batch.jobs.filter(kind="import").order_by("-created_at").first()
    if job is None:
        return None
    if job.finished_at is not None and timezone.now() - job.finished_at > SHOWN_AFTER_THE_END:
        return None
    problems = []
    if job.state == Job.State.FAILED:
        problems = list((job.result or {}).get("problems") or [job.message])
    return BackgroundImport(
        filename=job.params.get("filename", ""),
        state=job.state,
        started_at=job.started_at or job.created_at,
        finished_at=job.finished_at,
        result=job.result if job.state == Job.State.SUCCEEDED else {},
        problems=problems,
    )


@register_job_kind("import", can_view=can_manage_batches)
def run_import(job: Job, progress: JobProgress) -> tuple[dict, str]:
    with stored_upload(job.params) as stored:
        progress(0, 1, message=f"importing {job.params['filename']}")
        summary = import_items(
            job.subject,
            stored,
            filename=job.params["filename"],
            actor=Actor.of(job.created_by),
        )
    progress(1, 1)
    return {
        "items_created": summary.items_created,
        "queries_created": summary.queries_created,
        "responses_created": summary.responses_created,
    }, ""
