"""The ``import`` job: a big items file imported in the background.

The upload is first saved to the jobs folder (``save_upload``); the runner then imports
it with ``import_items`` — the same validation and all-or-nothing write as everywhere —
and deletes the saved copy. A rejected file fails the job with its problem lines in
``Job.result["problems"]``.
"""

import os

from annotation.access import can_manage_batches
from annotation.services.importing import import_items
from core.audit import Actor
from core.jobs.execution import JobProgress, job_files_dir, store_upload
from core.jobs.kinds import register_job_kind
from core.models import Job
from core.tabular import format_of


def save_upload(upload, filename: str) -> str:
    """Store an uploaded file for an import job; returns its name in the jobs folder."""
    return store_upload(upload, format_of(filename))  # the type is checked first


@register_job_kind("import", can_view=can_manage_batches)
def run_import(job: Job, progress: JobProgress) -> tuple[dict, str]:
    stored = job_files_dir() / job.params["stored_file"]
    try:
        progress(0, 1, message=f"importing {job.params['filename']}")
        summary = import_items(
            job.subject,
            stored,
            filename=job.params["filename"],
            actor=Actor.of(job.created_by),
        )
    finally:
        if stored.exists():
            os.remove(stored)
    progress(1, 1)
    return {
        "items_created": summary.items_created,
        "queries_created": summary.queries_created,
        "responses_created": summary.responses_created,
    }, ""
