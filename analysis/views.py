"""The analysis report page of a batch, under ``/manage/<slug>/report`` (ANALYSIS.md).

Researchers and admins (``analysis.access.can_analyse``) see the newest finished analysis of
a batch:
summary and agreement figures, the headline comparison of model–human Spearman ρ on the
full set against the similar-quality and high-disagreement subsets, the figures by category,
charts (inline SVG from ``analysis.plots``), the item and annotator tables, a bundled
batch's bundle sections (``analysis.bundle_charts``, ``presentation.bundles``), and downloads
(the report JSON, the CSV tables of ``REPORT_TABLES``, and every chart as SVG and PDF, one
by one or all in a zip). ``?category=`` / ``?subcategory=`` narrow the item table and the
category table to those items (the category filter of every staff page). Without a report
the page offers "Run analysis", which starts an ``analysis`` job and follows its progress
through ``/api/v1/jobs/<id>``.

Views stay thin: they parse the request, fetch the report
(``analysis.services.analyses.latest_report``) and the live score coverage
(``analysis.selectors.coverage``), and hand them to ``analysis.presentation``, which turns
them into the page's rows and the CSV tables; then they render or stream the result.
"""

import json

from django import forms
from django.contrib import messages
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    StreamingHttpResponse,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_POST

from analysis import presentation
from analysis.access import can_analyse
from analysis.figure_files import figure_file, figures_ready, figures_zip
from analysis.report_charts import CAPTIONS, page_bundle_charts, page_charts, scatter_figure
from analysis.report_kind import compares_two
from analysis.selectors import coverage as score_coverage
from analysis.services.analyses import (
    DEFAULT_RESAMPLES,
    MAX_RESAMPLES,
    latest_report,
    ratings_analysis_applies,
    require_ratings_kind,
    validate_settings,
)
from analysis.services.analyses import (
    JOB_KIND as ANALYSIS_JOB_KIND,
)
from analysis.services.scores import import_scores
from annotation.access import abilities
from annotation.models import Batch
from annotation.pages import render_batch_page, taxonomy_panel
from annotation.selectors import CategoryFilter
from core.access import staff_page
from core.audit import Actor
from core.jobs.execution import job_files_dir, newest_report_job
from core.jobs.pages import start_job_from_page
from core.jobs.study_views import FIGURE_CSP, FIGURE_FORMATS, figure_response
from core.jobs.subject_pages import analysis_context, csv_download, report_file, report_or_404
from core.models import Job
from core.uploads import receive_upload

ITEM_ROWS_SHOWN = 2000
ANNOTATOR_ROWS_SHOWN = 2000


# --------------------------------------------------------------------------- forms


class RunAnalysisForm(forms.Form):
    bootstrap = forms.IntegerField(
        label="Bootstrap resamples",
        min_value=0,
        max_value=MAX_RESAMPLES,
        initial=DEFAULT_RESAMPLES,
        help_text="For the 95 % confidence intervals; 0 skips them.",
    )
    seed = forms.IntegerField(
        label="Seed", min_value=0, initial=0, help_text="Same seed, same intervals."
    )


# --------------------------------------------------------------------------- helpers


def _report_or_404(batch: Batch) -> tuple[Job, dict]:
    return report_or_404(latest_report(batch), f"Batch {batch.slug}")


def _report_job_or_404(batch: Batch) -> Job:
    """The job of the newest report, without reading the report (the figure downloads
    read it only to draw)."""
    job = newest_report_job(batch, ANALYSIS_JOB_KIND)
    if job is None:
        raise Http404(f"Batch {batch.slug} has no finished analysis yet.")
    return job


def _reader(job: Job):
    def read() -> dict:
        with open(job_files_dir() / job.result_path, encoding="utf-8") as stream:
            return json.load(stream)

    return read


# --------------------------------------------------------------------------- pages


@staff_page(can_analyse)
@require_GET
def report_page(request: HttpRequest, slug: str) -> HttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    run_defaults = {"bootstrap": DEFAULT_RESAMPLES, "seed": 0}
    context = {
        "batch": batch,
        **analysis_context(
            batch, ANALYSIS_JOB_KIND, latest_report(batch), RunAnalysisForm, run_defaults
        ),
        "run_url": reverse("manage-report-run", args=[batch.slug]),
        "ratings_apply": ratings_analysis_applies(batch),
        **abilities(request.user),
    }
    job, report = context["job"], context["report"]
    categories = CategoryFilter.from_params(request.GET)
    context["taxonomy"] = taxonomy_panel(request, batch.items.all(), categories)
    if report is not None:
        items = presentation.report_items(report, categories.category, categories.subcategory)
        context.update(
            {
                "settings": report.get("settings", {}),
                "incomplete": presentation.incompleteness(report),
                "min_p_value_n": presentation.min_p_value_n(report),
                "headline": presentation.headline(
                    report,
                    similar=request.GET.get("similar", ""),
                    disagree=request.GET.get("disagree", ""),
                ),
                "charts": page_charts(job, report),
                "figures_ready": figures_ready(job),
                "has_scores": bool(report.get("correlations")),
                "scatter_caption": CAPTIONS["scatter"],
                "show_scatter": any(
                    c["subset"] == "full" and c["n"] > 0 for c in report.get("correlations", [])
                ),
                "agreement": presentation.agreement(report),
                "rankings": presentation.rankings(report),
                "competence": presentation.competence(report, ANNOTATOR_ROWS_SHOWN),
                "calibration": presentation.calibration(report),
                "category_rankings": presentation.category_rankings(
                    report, categories.category, categories.subcategory
                ),
                "category_calibration": presentation.category_calibration(
                    report, categories.category, categories.subcategory
                ),
                "validity": presentation.validity(report),
                "sources": presentation.source_rows(score_coverage(batch)),
                "item_rows": presentation.item_rows(report, ITEM_ROWS_SHOWN, items),
                "by_category": presentation.category_rows(
                    report, categories.category, categories.subcategory
                ),
                "has_categories": presentation.has_categories(report),
                "n_items_total": len(items),
                "items_capped": len(items) > ITEM_ROWS_SHOWN,
                "item_rows_shown": ITEM_ROWS_SHOWN,
                "label_names": list(items[0]["counts"]) if items else [],
                "pairwise": compares_two(report),
                "annotator_rows": presentation.annotator_rows(report, ANNOTATOR_ROWS_SHOWN),
                "n_annotators_total": len(report.get("annotators", [])),
                "annotators_capped": len(report.get("annotators", [])) > ANNOTATOR_ROWS_SHOWN,
                "bundles": presentation.bundles(
                    report, page_bundle_charts(job, report), ANNOTATOR_ROWS_SHOWN
                ),
            }
        )
    return render(request, "analysis/report.html", context)


@staff_page(can_analyse)
@require_POST
def run_analysis(request: HttpRequest, slug: str) -> HttpResponse:
    """Start an analysis job; JSON (for the page's script) or a redirect back to the page."""
    batch = get_object_or_404(Batch, slug=slug)

    def params(data: dict) -> dict:
        require_ratings_kind(batch)
        bootstrap, seed = validate_settings(data["bootstrap"], data["seed"])
        return {"bootstrap": bootstrap, "seed": seed}

    return start_job_from_page(
        request,
        ANALYSIS_JOB_KIND,
        batch,
        RunAnalysisForm(request.POST),
        params,
        back_to=reverse("manage-report", args=[batch.slug]),
        finished="Analysis finished.",
    )


# --------------------------------------------------------------------------- downloads


@staff_page(can_analyse)
@require_GET
def report_json(request: HttpRequest, slug: str) -> FileResponse:
    batch = get_object_or_404(Batch, slug=slug)
    job, _ = _report_or_404(batch)
    return report_file(job, f"{batch.slug}-report.json")


REPORT_TABLES = {
    "items": presentation.item_table,
    "correlations": presentation.correlation_table,
    "annotators": presentation.annotator_table,
    "bundle_positions": presentation.bundle_position_table,
    "bundle_concordance": presentation.bundle_concordance_table,
    "bundle_decomposition": presentation.bundle_decomposition_table,
    "bundle_participants": presentation.bundle_idiosyncrasy_table,
    "categories": presentation.category_table,
    "category_correlations": presentation.category_correlation_table,
    "category_annotators": presentation.category_annotator_table,
    "rankings": presentation.ranking_table,
    "win_probability": presentation.win_probability_table,
    "competence": presentation.competence_table,
    "calibration": presentation.calibration_table,
    "category_rankings": presentation.category_ranking_table,
    "category_calibration": presentation.category_calibration_table,
}


@staff_page(can_analyse)
@require_GET
def report_table_csv(request: HttpRequest, slug: str, table: str) -> StreamingHttpResponse:
    """One of the report's tables (``REPORT_TABLES``) as a CSV download."""
    batch = get_object_or_404(Batch, slug=slug)
    _, report = _report_or_404(batch)
    columns, rows = REPORT_TABLES[table](report)
    return csv_download(columns, rows, f"{batch.slug}-{table}.csv")


@staff_page(can_analyse)
@require_GET
def score_scatter(request: HttpRequest, slug: str) -> HttpResponse:
    """Mean human rating (from the report) against each source's current scores, as SVG."""
    batch = get_object_or_404(Batch, slug=slug)
    _, report = _report_or_404(batch)
    drawing = scatter_figure(batch, report)
    if drawing is None:
        raise Http404("No score source scores a labelled item of this batch.")
    response = HttpResponse(drawing.svg(), content_type="image/svg+xml; charset=utf-8")
    response["Content-Security-Policy"] = FIGURE_CSP
    response["Cache-Control"] = "private, max-age=300"
    return response


@staff_page(can_analyse)
@require_GET
def report_figure(request: HttpRequest, slug: str, key: str, fmt: str) -> HttpResponse:
    """One chart of the report as a standalone SVG or PDF file, for a paper."""
    batch = get_object_or_404(Batch, slug=slug)
    job = _report_job_or_404(batch)
    drawn = figure_file(job, batch, _reader(job), key, fmt) if fmt in FIGURE_FORMATS else None
    if drawn is None:
        raise Http404(f"The report of {batch.slug} has no figure {key}.{fmt}.")
    return figure_response(drawn, fmt, f"{batch.slug}-{key}.{fmt}")


@staff_page(can_analyse)
@require_GET
def report_figures_zip(request: HttpRequest, slug: str) -> FileResponse:
    """Every chart of the report as SVG and PDF in one zip, with a file of the captions:
    the zip the analysis stored (``analysis.figure_files``)."""
    batch = get_object_or_404(Batch, slug=slug)
    job = _report_job_or_404(batch)
    return FileResponse(
        open(figures_zip(job, batch, _reader(job)), "rb"),  # FileResponse closes it
        as_attachment=True,
        filename=f"{batch.slug}-figures.zip",
        content_type="application/zip",
    )


@staff_page(can_analyse)
@require_POST
def upload_scores(request: HttpRequest, slug: str) -> HttpResponse:
    """The batch page's score upload: all or nothing, problems listed on the batch page."""
    batch = get_object_or_404(Batch, slug=slug)
    upload = receive_upload(
        request,
        lambda file, name: import_scores(
            file, filename=name, batch=batch, actor=Actor.of(request.user)
        ),
        missing="Choose a .jsonl or .csv file of scores.",
    )
    if not upload.accepted:
        return render_batch_page(
            request,
            batch,
            problems=upload.problems,
            upload_name=upload.filename,
            upload_subject="model scores",
            panel_state={"scores": {"problems": upload.problems}},
            status=400,
        )
    summary = upload.result
    messages.success(
        request,
        f"Imported {summary.scores_created} scores from {upload.filename} "
        f"({summary.scores_unchanged} already stored; {summary.sources_created} new sources).",
    )
    return redirect("manage-batch", slug=batch.slug)
