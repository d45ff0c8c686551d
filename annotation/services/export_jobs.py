"""The ``export`` job: one export of a batch written to the jobs folder.

Imported by ``AnnotationConfig.ready()`` so that every process (web, worker, commands)
has the kind registered. Parameters (``Job.params``): ``layout`` (long, dense,
annotators, card), ``format`` (jsonl, csv, parquet; md for the card), ``all_statuses``,
and optionally ``category`` / ``subcategory`` (the export of those items only).
"""

import os

from annotation.access import can_export
from annotation.selectors import CategoryFilter
from annotation.services.exports.delivery import export_to_file
from annotation.services.exports.schema import export_params
from core.jobs.execution import JobProgress, job_files_dir
from core.jobs.kinds import register_job_kind
from core.models import Job


@register_job_kind("export", can_view=can_export)
def run_export(job: Job, progress: JobProgress) -> tuple[dict, str]:
    params = job.params or {}
    layout, fmt, all_statuses = export_params(
        params.get("layout"), params.get("format"), params.get("all_statuses")
    )
    categories = CategoryFilter.from_params(params)
    filename = f"{job.pk}-{job.subject.slug}-{layout}.{fmt}"
    target = job_files_dir() / filename
    # Written under another name and renamed at the end: never a half-written download.
    partial = target.with_name(target.name + ".partial")
    try:
        rows = export_to_file(
            job.subject,
            layout,
            fmt,
            partial,
            all_statuses=all_statuses,
            progress=progress,
            categories=categories,
        )
        os.replace(partial, target)
    finally:
        if partial.exists():
            partial.unlink()
    result = {
        "rows": rows,
        "layout": layout,
        "format": fmt,
        "all_statuses": all_statuses,
        **categories.params(),
    }
    return result, filename
