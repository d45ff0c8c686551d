"""The report's figures as files, drawn once per report: every chart as SVG and PDF, with a
file of the captions, in one zip kept beside the report in the jobs folder.

Drawing them takes seconds on a large batch (the PDFs and the scatter plot most), so the
analysis job draws them when it has written the report (``store_figures``) and "Download
figures" only sends the stored zip (``figures_zip``); a single figure is read out of it,
or drawn alone while the zip is not ready (``figure_file``). The zip is listed in the job's
``result["files"]`` under ``"figures"``, so it is kept and deleted with the report
(``core.jobs.retention``).

The scatter plot shows the scores as imported *now*, not as the analysis saw them: the
zip's comment records the state of the score sources it was drawn from
(``scores_state``), and a zip drawn before a later score import, or a report analysed
before figures were stored, is drawn again (and stored) on the next download. The report
page knows beforehand (``figures_ready``) and shows its progress while that runs.
"""

import io
import json
import zipfile
from collections.abc import Callable
from pathlib import Path

from django.db.models import Count, Max

from analysis import plots
from analysis.models import ScoreSource
from analysis.report_charts import report_figures
from annotation.models import Batch
from core.files import output_path
from core.jobs.execution import job_files_dir
from core.models import Job

FILES_KEY = "figures"


def scores_state() -> str:
    """What changes whenever a score is added or a source removed, in one small query:
    every import that adds scores touches its sources' ``updated_at``, a new source is
    created with it, and stored scores are never changed in place."""
    state = ScoreSource.objects.aggregate(n=Count("pk"), newest=Max("updated_at"))
    newest = state["newest"].isoformat() if state["newest"] else ""
    return json.dumps({"sources": state["n"], "updated": newest})


def store_figures(
    job: Job, batch: Batch, report: dict, progress: Callable[[int, int], None] | None = None
) -> str:
    """Draw every figure of the report and write the zip; its file name in the jobs folder.
    ``progress(done, total)`` after each file drawn."""
    state = scores_state()  # before drawing: an import meanwhile makes the zip stale
    figures = report_figures(batch, report)
    total = 2 * len(figures) + 1
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.comment = state.encode()
        when = job.started_at or job.created_at
        captions = [f"Figures of the analysis of {batch.slug} ({when:%Y-%m-%d %H:%M} UTC)\n"]
        done = 0
        for key, chart in figures.items():
            for fmt in plots.FILE_FORMATS:
                archive.writestr(f"{batch.slug}-{key}.{fmt}", chart.drawing.file(fmt))
                done += 1
                if progress is not None:
                    progress(done, total)
            captions.append(f"{batch.slug}-{key}: {chart.title}\n{chart.caption}\n")
        archive.writestr("captions.txt", "\n".join(captions))
    name = f"{job.pk}-{batch.slug}-figures.zip"
    # a temporary name of its own: two downloads after a score import may draw at once
    with output_path(job_files_dir() / name) as partial:
        partial.write_bytes(buffer.getvalue())
    if progress is not None:
        progress(total, total)
    return name


def _stored_path(job: Job) -> Path | None:
    files = (job.result or {}).get("files") if isinstance(job.result, dict) else None
    name = files.get(FILES_KEY) if isinstance(files, dict) else None
    return job_files_dir() / name if isinstance(name, str) and name else None


def figures_ready(job: Job) -> bool:
    """Whether the job's figures are stored and drawn from the scores as they are now."""
    path = _stored_path(job)
    if path is None:
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            return archive.comment.decode() == scores_state()
    except (OSError, zipfile.BadZipFile, UnicodeDecodeError):
        return False


def figures_zip(job: Job, batch: Batch, report: Callable[[], dict]) -> Path:
    """The stored zip of the report's figures, drawn (again) first when not ready; only
    then is the report read (``report()``)."""
    if not figures_ready(job):
        name = store_figures(job, batch, report())
        result = dict(job.result) if isinstance(job.result, dict) else {}
        result["files"] = {**result.get("files", {}), FILES_KEY: name}
        Job.objects.filter(pk=job.pk).update(result=result)
        job.result = result
    return _stored_path(job)


def figure_file(
    job: Job, batch: Batch, report: Callable[[], dict], key: str, fmt: str
) -> bytes | None:
    """One figure's file: out of the stored zip when it is ready, else that figure alone
    drawn now (a second or less; the zip is drawn by its own download). ``None`` when the
    report has no such figure."""
    if not figures_ready(job):
        chart = report_figures(batch, report()).get(key)
        return chart.drawing.file(fmt) if chart is not None else None
    with zipfile.ZipFile(_stored_path(job)) as archive:
        try:
            return archive.read(f"{batch.slug}-{key}.{fmt}")
        except KeyError:
            return None
