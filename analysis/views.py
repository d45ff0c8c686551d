"""The analysis report page of a batch, under ``/manage/<slug>/report`` (ANALYSIS.md).

Researchers and admins (``analysis.access.can_analyse``) see the newest finished analysis of
a batch:
summary and agreement figures, the headline comparison of model–human Spearman ρ on the
full set against the similar-quality and high-disagreement subsets, charts (inline SVG from
``analysis.plots``), the item and annotator tables, and downloads (the report JSON and
three CSV tables). Without a report the page offers "Run analysis", which starts an
``analysis`` job and follows its progress through ``/api/v1/jobs/<id>``.

Views stay thin: they parse the request, fetch the report
(``analysis.services.analyses.latest_report``) and the live score coverage
(``analysis.selectors.coverage``), and hand them to ``analysis.presentation``, which turns
them into the page's rows and the CSV tables; then they render or stream the result.
"""

import numpy as np
from django import forms
from django.contrib import messages
from django.core.cache import cache
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_POST

from analysis import plots, presentation
from analysis.access import can_analyse
from analysis.loading import load_items, load_scores
from analysis.selectors import coverage as score_coverage
from analysis.services.analyses import (
    DEFAULT_RESAMPLES,
    MAX_RESAMPLES,
    latest_report,
    validate_settings,
)
from analysis.services.scores import import_scores
from annotation.access import abilities
from annotation.models import Batch, BatchKind
from annotation.pages import render_batch_page
from core.access import staff_page
from core.audit import Actor
from core.errors import ServiceError
from core.jobs.execution import job_files_dir
from core.jobs.queue import start_job
from core.models import Job
from core.uploads import receive_upload

ITEM_ROWS_SHOWN = 2000
ANNOTATOR_ROWS_SHOWN = 2000
CHART_CACHE_SECONDS = 24 * 3600
SCATTER_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


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


def _analysis_jobs(batch: Batch):
    return batch.jobs.filter(kind="analysis")


def _active_job(batch: Batch) -> Job | None:
    return (
        _analysis_jobs(batch)
        .filter(state__in=[Job.State.PENDING, Job.State.RUNNING])
        .order_by("-created_at")
        .first()
    )


def _failed_job(batch: Batch) -> Job | None:
    """The newest finished analysis, if it failed (a report may still be shown: an older one)."""
    newest = (
        _analysis_jobs(batch)
        .filter(state__in=[Job.State.SUCCEEDED, Job.State.FAILED])
        .order_by("-created_at")
        .first()
    )
    return newest if newest is not None and newest.state == Job.State.FAILED else None


def _job_status(job: Job) -> dict:
    return {
        "id": str(job.pk),
        "state": job.state,
        "progress": job.progress,
        "total": job.total,
        "message": job.message,
        "status_url": reverse("api-job", args=[job.pk]),
    }


def _report_or_404(batch: Batch) -> tuple[Job, dict]:
    found = latest_report(batch)
    if found is None:
        raise Http404(f"Batch {batch.slug} has no finished analysis yet.")
    return found


# --------------------------------------------------------------------------- charts


def _charts(job: Job, report: dict) -> list[dict]:
    """The report's charts as inline SVG, rendered once per finished job (then cached)."""
    key = f"analysis-report-charts:{job.pk}"
    charts = cache.get(key)
    if charts is None:
        charts = _render_charts(report)
        cache.set(key, charts, CHART_CACHE_SECONDS)
    return [{**chart, "svg": mark_safe(chart["svg"])} for chart in charts]


def _render_charts(report: dict) -> list[dict]:
    families = plots.subset_families(report["kind"], report.get("subsets", {}))
    sizes = presentation.subset_sizes(report)
    items, pairwise = report.get("items", []), report["kind"] == "pairwise"
    candidates = [
        (
            "correlations",
            "Model–human Spearman ρ across the subsets",
            "Each line is a score source; the band is its 95 % bootstrap interval. Left: "
            "items of similar quality; right: items with the most disagreement. A gap "
            "means no correlation there (fewer than 3 items, or all scores or means equal).",
            "wide",
            lambda: plots.correlation_chart(
                report.get("correlations", []), families, subset_sizes=sizes
            ),
        ),
        (
            "by-kind",
            "The same, averaged by kind of source",
            "Mean Spearman ρ over the sources of each kind (the study's Fig. 10/11).",
            "wide",
            lambda: plots.by_kind_chart(report.get("by_kind", []), families, subset_sizes=sizes),
        ),
        (
            "entropy",
            "Disagreement per item",
            "Shannon entropy of each item's labels: 0 when everyone agrees, log₂5 ≈ 2.32 "
            "bits when the labels spread evenly over the five choices.",
            "half",
            lambda: plots.entropy_histogram(items),
        ),
        (
            "p-disagree",
            "Disagreement per pair",
            "Share of an item's labels against the side most annotators took "
            "(0 = unanimous, 0.5 = split evenly).",
            "half",
            lambda: plots.p_disagree_histogram(items) if pairwise else None,
        ),
        (
            "agreement",
            "Agreement across the batch",
            "Krippendorff's α (1 = perfect agreement, 0 = chance) and the item means of "
            "the disagreement measures (0 = everyone agrees).",
            "half",
            lambda: plots.agreement_chart(report.get("agreement", {})),
        ),
        (
            "crowd",
            "Individual versus collective preference",
            "Each annotator's Spearman ρ with the mean of the other annotators on the "
            "same items: low values flag idiosyncratic annotators.",
            "half",
            lambda: plots.crowd_spearman_histogram(report.get("annotators", [])),
        ),
    ]
    charts = []
    for key, title, caption, width, draw in candidates:
        svg = draw()
        if svg is not None:
            charts.append(
                {"key": key, "title": title, "caption": caption, "width": width, "svg": svg}
            )
    return charts


# --------------------------------------------------------------------------- pages


@staff_page(can_analyse)
@require_GET
def report_page(request: HttpRequest, slug: str) -> HttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    found = latest_report(batch)
    job, report = found if found is not None else (None, None)
    active = _active_job(batch)
    context = {
        "batch": batch,
        "job": job,
        "report": report,
        "active_job": active,
        "active_status": _job_status(active) if active else None,
        "failed_job": _failed_job(batch),
        "form": RunAnalysisForm(initial=_run_initial(job)),
        "run_url": reverse("manage-report-run", args=[batch.slug]),
        **abilities(request.user),
    }
    if report is not None:
        items = report.get("items", [])
        context.update(
            {
                "settings": report.get("settings", {}),
                "headline": presentation.headline(
                    report,
                    similar=request.GET.get("similar", ""),
                    disagree=request.GET.get("disagree", ""),
                ),
                "charts": _charts(job, report),
                "has_scores": bool(report.get("correlations")),
                "show_scatter": any(
                    c["subset"] == "full" and c["n"] > 0 for c in report.get("correlations", [])
                ),
                "agreement": presentation.agreement(report),
                "sources": presentation.source_rows(score_coverage(batch)),
                "item_rows": presentation.item_rows(report, ITEM_ROWS_SHOWN),
                "n_items_total": len(items),
                "items_capped": len(items) > ITEM_ROWS_SHOWN,
                "item_rows_shown": ITEM_ROWS_SHOWN,
                "label_names": list(items[0]["counts"]) if items else [],
                "pairwise": report["kind"] == "pairwise",
                "annotator_rows": presentation.annotator_rows(report, ANNOTATOR_ROWS_SHOWN),
                "n_annotators_total": len(report.get("annotators", [])),
                "annotators_capped": len(report.get("annotators", [])) > ANNOTATOR_ROWS_SHOWN,
            }
        )
    return render(request, "analysis/report.html", context)


def _run_initial(job: Job | None) -> dict:
    params = (job.params or {}) if job is not None else {}
    return {
        "bootstrap": params.get("bootstrap", DEFAULT_RESAMPLES),
        "seed": params.get("seed", 0),
    }


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@staff_page(can_analyse)
@require_POST
def run_analysis(request: HttpRequest, slug: str) -> HttpResponse:
    """Start an analysis job; JSON (for the page's script) or a redirect back to the page."""
    batch = get_object_or_404(Batch, slug=slug)
    form = RunAnalysisForm(request.POST)
    if not form.is_valid():
        problems = "; ".join(
            f"{form[field].label}: {' '.join(errors)}" for field, errors in form.errors.items()
        )
        if _wants_json(request):
            return JsonResponse({"error": problems}, status=400)
        messages.error(request, f"Analysis not started — {problems}")
        return redirect("manage-report", slug=batch.slug)
    try:
        bootstrap, seed = validate_settings(
            form.cleaned_data["bootstrap"], form.cleaned_data["seed"]
        )
        job = start_job("analysis", batch, {"bootstrap": bootstrap, "seed": seed}, request.user)
    except ServiceError as error:
        if _wants_json(request):
            return JsonResponse({"error": str(error)}, status=400)
        messages.error(request, str(error))
        return redirect("manage-report", slug=batch.slug)
    job.refresh_from_db()
    if _wants_json(request):
        return JsonResponse(_job_status(job), status=202)
    if job.state == Job.State.SUCCEEDED:
        messages.success(request, "Analysis finished.")
    elif job.state == Job.State.FAILED:
        messages.error(request, f"Analysis failed: {job.message}")
    else:
        messages.success(request, "Analysis started; this page follows its progress.")
    return redirect("manage-report", slug=batch.slug)


# --------------------------------------------------------------------------- downloads


@staff_page(can_analyse)
@require_GET
def report_json(request: HttpRequest, slug: str) -> FileResponse:
    batch = get_object_or_404(Batch, slug=slug)
    job, _ = _report_or_404(batch)
    path = job_files_dir() / job.result_path
    return FileResponse(
        open(path, "rb"),  # FileResponse closes it
        as_attachment=True,
        filename=f"{batch.slug}-report.json",
        content_type="application/json",
    )


def _csv_response(batch: Batch, name: str, columns: list[str], rows) -> StreamingHttpResponse:
    response = StreamingHttpResponse(
        presentation.csv_stream(columns, rows), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{batch.slug}-{name}.csv"'
    return response


REPORT_TABLES = {
    "items": presentation.item_table,
    "correlations": presentation.correlation_table,
    "annotators": presentation.annotator_table,
}


@staff_page(can_analyse)
@require_GET
def report_table_csv(request: HttpRequest, slug: str, table: str) -> StreamingHttpResponse:
    """One of the report's tables (items, correlations, annotators) as a CSV download."""
    batch = get_object_or_404(Batch, slug=slug)
    _, report = _report_or_404(batch)
    return _csv_response(batch, table, *REPORT_TABLES[table](report))


@staff_page(can_analyse)
@require_GET
def score_scatter(request: HttpRequest, slug: str) -> HttpResponse:
    """Mean human rating (from the report) against each source's current scores, as SVG."""
    batch = get_object_or_404(Batch, slug=slug)
    _, report = _report_or_404(batch)
    arrays = load_items(batch)
    mean_of = {item["item_id"]: item.get("mean") for item in report.get("items", [])}
    means = np.array(
        [np.nan if mean_of.get(i) is None else mean_of[i] for i in arrays.item_ids], dtype=float
    )
    panels = [
        plots.ScatterPanel(source.name, source.kind, source.scores, means)
        for source in load_scores(batch, arrays)
    ]
    svg = plots.score_scatter(panels, pairwise=batch.kind == BatchKind.PAIRWISE)
    if svg is None:
        raise Http404("No score source scores a labelled item of this batch.")
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    response["Content-Security-Policy"] = SCATTER_CSP
    response["Cache-Control"] = "private, max-age=300"
    return response


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
        state = {"scores": {"problems": upload.problems, "upload_name": upload.filename}}
        return render_batch_page(request, batch, panel_state=state, status=400)
    summary = upload.result
    messages.success(
        request,
        f"Imported {summary.scores_created} scores from {upload.filename} "
        f"({summary.scores_unchanged} already stored; {summary.sources_created} new sources).",
    )
    return redirect("manage-batch", slug=batch.slug)
