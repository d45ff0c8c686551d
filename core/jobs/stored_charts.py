"""A finished job's page charts, drawn by the job itself and kept as a file beside its
report, so that the first view of its page does not wait for matplotlib.

A runner that draws its page's charts (a list of dicts, each with its ``svg``) writes them
with ``store_charts`` and lists the file in its result's ``files`` under ``FILES_KEY``; the
pages read them back (``stored_charts``) before drawing anything. Kept and deleted with the
report like every file a result lists (``core.jobs.retention``)."""

import json

from core.files import output_path
from core.jobs.execution import job_files_dir
from core.models import Job

__all__ = ["FILES_KEY", "store_charts", "stored_charts"]

FILES_KEY = "charts"


def store_charts(job: Job, charts: list[dict]) -> str:
    """Write the job's page charts; the file's name in the jobs folder."""
    name = f"{job.pk}-charts.json"
    with (
        output_path(job_files_dir() / name) as partial,
        open(partial, "w", encoding="utf-8") as stream,
    ):
        json.dump(charts, stream, ensure_ascii=False)
    return name


def stored_charts(job: Job) -> list[dict] | None:
    """The charts the job stored, or ``None`` (drawn by an older version, or deleted)."""
    files = job.result.get("files") if isinstance(job.result, dict) else None
    name = files.get(FILES_KEY) if isinstance(files, dict) else None
    if not isinstance(name, str) or not name:
        return None
    try:
        with open(job_files_dir() / name, encoding="utf-8") as stream:
            charts = json.load(stream)
    except (OSError, ValueError):
        return None
    return charts if isinstance(charts, list) else None
