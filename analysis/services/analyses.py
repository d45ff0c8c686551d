"""Running the analysis of a batch: load arrays, build the report, keep it as a job file."""

import json
import os
from collections.abc import Callable
from pathlib import Path

from django.conf import settings

from analysis.access import can_analyse
from analysis.bundle_section import bundle_section
from analysis.figure_files import FILES_KEY as FIGURES
from analysis.figure_files import store_figures
from analysis.loading import load_batch_and_scores
from analysis.report_charts import draw_page_charts
from analysis.report_competence import review_entry
from analysis.reports import build_report
from annotation.models import Batch
from annotation.services.questionnaire import choice_questions
from core.blas import single_blas_thread
from core.errors import InvalidInput
from core.jobs.execution import JobProgress, job_files_dir, newest_report
from core.jobs.kinds import register_job_kind
from core.jobs.stored_charts import FILES_KEY as CHARTS
from core.jobs.stored_charts import store_charts
from core.models import Job

JOB_KIND = "analysis"
DEFAULT_RESAMPLES = 1000
MAX_RESAMPLES = 100_000


def analyse_batch(
    batch: Batch,
    *,
    n_resamples: int = DEFAULT_RESAMPLES,
    seed: int = 0,
    group_by: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    """The report of ANALYSIS.md for the batch's counted labels and imported scores.

    ``group_by`` names the questionnaire's choice question whose answers split the
    annotators into groups (default: its first choice question).
    """
    require_ratings_kind(batch)
    n_resamples, seed = validate_settings(n_resamples, seed)
    group_by = validate_group_by(batch, group_by)
    arrays, sources = load_batch_and_scores(batch)
    with single_blas_thread():
        report = build_report(
            arrays,
            sources,
            n_resamples=n_resamples,
            seed=seed,
            group_by=group_by,
            progress=progress,
        )
    if "competence" in report:  # the batch's review list (its review_lowest_competence)
        section = report["competence"]
        section["review"] = review_entry(section["annotators"], batch.review_lowest_competence)
    bundles = bundle_section(batch, n_resamples=n_resamples, seed=seed)
    if bundles is not None:  # a batch without bundles keeps its report as it was
        report["bundles"] = bundles
    return report


def ratings_analysis_applies(batch: Batch) -> bool:
    """Whether the batch's kind has this analysis (``TaskKind.analyses``): short answers
    and similarity judgments are analysed by the study types that take such a batch as
    their human batch (the One-Word Census, Genie)."""
    return "ratings" in batch.task_kind.analyses


def require_ratings_kind(batch: Batch) -> None:
    """Refuse, before any job starts, an analysis of a batch whose kind has none."""
    if not ratings_analysis_applies(batch):
        raise InvalidInput("batch", f"the ratings analysis does not apply to {batch.kind} batches")


def validate_group_by(batch: Batch, group_by) -> str | None:
    if group_by in (None, ""):
        return None
    known = [question["id"] for question in choice_questions(batch.questionnaire)]
    if group_by not in known:
        allowed = ", ".join(known) or "none: the batch has no choice question"
        raise InvalidInput("group_by", f"{group_by!r} is not a choice question ({allowed})")
    return group_by


def validate_settings(n_resamples, seed) -> tuple[int, int]:
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, int):
        raise InvalidInput("bootstrap", f"must be an integer, got {n_resamples!r}")
    if not 0 <= n_resamples <= MAX_RESAMPLES:
        raise InvalidInput("bootstrap", f"must be between 0 and {MAX_RESAMPLES}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidInput("seed", f"must be a non-negative integer, got {seed!r}")
    return n_resamples, seed


def write_report(report: dict, path: Path) -> None:
    """JSON with plain numbers only (``allow_nan=False`` fails loudly on a stray NaN)."""
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w", encoding="utf-8") as stream:
        json.dump(report, stream, allow_nan=False, ensure_ascii=False)
    os.replace(partial, path)


@register_job_kind(JOB_KIND, can_view=can_analyse)
def run_analysis_job(job: Job, progress: JobProgress) -> tuple[dict, str]:
    """The report, then its page's charts (``core.jobs.stored_charts``) and its figure files
    (``analysis.figure_files``), drawn once: the job's progress counts the analysis's steps,
    then each figure file drawn."""
    params = job.params or {}
    analysed = 0

    def analysis_progress(done: int, total: int) -> None:
        nonlocal analysed
        analysed = total
        progress(done, total + 1)  # one step more: the figures, until they are counted

    report = analyse_batch(
        job.subject,
        n_resamples=params.get("bootstrap", DEFAULT_RESAMPLES),
        seed=params.get("seed", 0),
        group_by=params.get("group_by"),
        progress=analysis_progress,
    )
    filename = f"{job.pk}-{job.subject.slug}-report.json"
    write_report(report, job_files_dir() / filename)
    # the page's charts and the figure files, drawn here once for every later view
    files = {CHARTS: store_charts(job, draw_page_charts(report))}
    if settings.ANALYSIS_FIGURES_IN_JOB:  # else drawn on the first "Download figures"
        files[FIGURES] = store_figures(
            job,
            job.subject,
            report,
            lambda done, total: progress(analysed + done, analysed + total),
        )
    summary = {
        "n_items": report["n_items"],
        "n_labels": report["n_labels"],
        "n_annotators": report["n_annotators"],
        "n_sources": len(report["sources"]),
        "files": files,
    }
    return summary, filename


def latest_report(batch: Batch) -> tuple[Job, dict] | None:
    """The newest finished analysis of the batch and its report, if any."""
    return newest_report(batch, "analysis")
