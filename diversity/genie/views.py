"""The Genie pages of the staff site, under ``/manage/genie/`` (ANALYSIS.md, "Genie").

* the list (``/manage/genie/``): every set with its size and newest analysis, and an upload
  form for a judgments file;
* a set (``/manage/genie/<name>/``): the newest finished report — novelty profiles (one line
  per document), the per-feature summary with its intervals, the agreement of human and LLM
  judgments per feature and overall when both exist — the tables and downloads, the
  "Compare" form that shows the difference of two chosen models or methods
  (``diversity.genie.choice``), and the form that runs the analysis again (optionally
  against a ``similarity`` batch).
"""

from django import forms
from django.contrib import messages
from django.http import (
    FileResponse,
    HttpRequest,
    HttpResponse,
    StreamingHttpResponse,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_POST

from annotation.kinds import kinds_reading_text
from core.access import staff_page
from core.audit import Actor
from core.errors import ServiceError
from core.jobs.forms import bootstrap_field, seed_field
from core.jobs.pages import start_job_from_page
from core.jobs.subject_pages import (
    analysis_context,
    cached_charts,
    csv_download,
    report_file,
    report_or_404,
)
from core.models import Job
from core.tabular import ImportRejected
from diversity.genie import plots, presentation, selectors
from diversity.genie.access import can_analyse_genie, can_import_genie, can_view_genie
from diversity.genie.charts import page_charts
from diversity.genie.choice import CompareForm, compared
from diversity.genie.core import exports
from diversity.genie.models import GenieSet
from diversity.genie.services.analyses import (
    DEFAULT_DRAWS,
    DEFAULT_SEED,
    HUMAN_ANALYSIS,
    JOB_KIND,
    MAX_DRAWS,
    analysis_params,
    latest_report,
)
from diversity.genie.services.imports import companion_files, import_genie, import_summary
from diversity.human_batches import batch_exists, human_batch_field


class RunGenieForm(forms.Form):
    bootstrap = bootstrap_field(
        MAX_DRAWS, DEFAULT_DRAWS, "For the 95 % intervals per feature (resampling documents)."
    )
    seed = seed_field(DEFAULT_SEED)
    human_batch = human_batch_field(
        HUMAN_ANALYSIS,
        f"A {kinds_reading_text(HUMAN_ANALYSIS)} batch of the set's pairs; none: the set's own "
        "batch (genie_batch), else the file's human rows.",
    )


# the run form's fields as the newest report's parameters may lack them
RUN_DEFAULTS = {"bootstrap": DEFAULT_DRAWS, "seed": DEFAULT_SEED, "human_batch": ""}


# --------------------------------------------------------------------------- helpers


def _report_or_404(genie_set: GenieSet) -> tuple[Job, dict]:
    return report_or_404(latest_report(genie_set), f"Genie set {genie_set.name}")


def _charts(job: Job, report: dict) -> list[dict]:
    """The report's charts as inline SVG: those the job stored, else drawn (then cached)."""
    return cached_charts("genie", job, lambda: page_charts(report))


# --------------------------------------------------------------------------- the list


def _list_context(request: HttpRequest, **extra) -> dict:
    return {
        "rows": selectors.genie_rows(),
        "can_import": can_import_genie(request.user),
        "can_analyse": can_analyse_genie(request.user),
        "default_bootstrap": DEFAULT_DRAWS,
        "default_seed": DEFAULT_SEED,
        **extra,
    }


@staff_page(can_view_genie)
@require_GET
def genie_list(request: HttpRequest) -> HttpResponse:
    return render(request, "genie/genie_list.html", _list_context(request))


@staff_page(can_import_genie)
@require_POST
def genie_upload(request: HttpRequest) -> HttpResponse:
    """The list page's upload: all or nothing, problems listed on the list page."""
    name = request.POST.get("name", "")
    description = request.POST.get("description", "")
    upload = request.FILES.get("file")
    try:
        if upload is None:
            raise ServiceError("file: choose a .jsonl, .json or .csv file of judgments")
        genie_set = import_genie(
            name,
            upload,
            filename=upload.name,
            description=description,
            actor=Actor.of(request.user),
            **companion_files(request.FILES),
        )
    except ImportRejected as rejected:
        problems = list(rejected.problems)
    except ServiceError as error:
        problems = [str(error)]
    else:
        messages.success(request, import_summary(genie_set))
        return redirect("manage-genie", name=genie_set.name)
    context = _list_context(
        request, problems=problems, form_values={"name": name, "description": description}
    )
    return render(request, "genie/genie_list.html", context, status=400)


# --------------------------------------------------------------------------- a set


@staff_page(can_view_genie)
@require_GET
def genie_page(request: HttpRequest, name: str) -> HttpResponse:
    genie_set = get_object_or_404(GenieSet.objects.select_related("human_batch"), name=name)
    found = latest_report(genie_set)
    context = {
        "genie_set": genie_set,
        **analysis_context(genie_set, JOB_KIND, found, RunGenieForm, RUN_DEFAULTS),
        "run_url": reverse("manage-genie-run", args=[genie_set.name]),
        "can_analyse": can_analyse_genie(request.user),
    }
    job, report = context["job"], context["report"]
    if report is not None:
        human_batch = report["settings"].get("human_batch")
        context.update(
            {
                "settings": report["settings"],
                "charts": _charts(job, report),
                "features": report.get("features", []),
                "document_rows": presentation.document_rows(report),
                "feature_rows": presentation.feature_rows(report),
                "agreement_rows": presentation.agreement_rows(report),
                "comparison_rows": presentation.comparison_rows(report),
                **_chosen_context(request, report),
                "human_batch": human_batch,
                "human_batch_exists": batch_exists(human_batch),
            }
        )
    form = context.get("compare_form")
    refused = form is not None and form.is_bound and not form.is_valid()
    return render(request, "genie/genie_page.html", context, status=400 if refused else 200)


def _chosen_context(request: HttpRequest, report: dict) -> dict:
    """The "Compare" form and, once two groups are chosen (``?first=…&second=…``), their
    difference per feature as a table and a forest plot."""
    chosen = "first" in request.GET or "second" in request.GET
    form = CompareForm(report, request.GET if chosen else None)
    context = {"compare_form": form}
    if chosen and form.is_valid():
        choice = form.cleaned_data["choice"]
        rows = presentation.chosen_rows(compared(report, choice))
        title = f"{choice.first} − {choice.second}, {plots.SOURCE_NAMES[choice.source]}"
        chart = plots.difference_forest(rows, title)
        context.update(
            chosen=choice,
            chosen_rows=rows,
            # matplotlib's SVG writer escapes the group names (plots.chart_text)
            chosen_chart=mark_safe(chart) if chart else None,  # noqa: S308
        )
    return context


@staff_page(can_analyse_genie)
@require_POST
def run_genie(request: HttpRequest, name: str) -> HttpResponse:
    """Start an analysis job; JSON (for the page's script) or a redirect to the set."""
    genie_set = get_object_or_404(GenieSet, name=name)
    return start_job_from_page(
        request,
        JOB_KIND,
        genie_set,
        RunGenieForm(request.POST),
        lambda data: analysis_params(data["bootstrap"], data["seed"], data["human_batch"] or None),
        back_to=reverse("manage-genie", args=[genie_set.name]),
        finished=f"Genie set {genie_set.name} analysed.",
    )


# --------------------------------------------------------------------------- downloads


@staff_page(can_view_genie)
@require_GET
def report_json(request: HttpRequest, name: str) -> FileResponse:
    genie_set = get_object_or_404(GenieSet, name=name)
    job, _ = _report_or_404(genie_set)
    return report_file(job, f"genie-{genie_set.name}-report.json")


REPORT_TABLES = {
    "documents": presentation.document_table,
    "features": presentation.feature_table,
    "agreement": presentation.agreement_table,
    "comparisons": presentation.comparison_table,
    "questions": presentation.question_table,
}
GENIE_EXPORTS = {"genie": exports.genie_records, "q_genie": exports.q_genie_records}


@staff_page(can_view_genie)
@require_GET
def genie_export(request: HttpRequest, name: str, table: str) -> StreamingHttpResponse:
    """``genie.jsonl`` / ``q_genie.jsonl``: the LLM scores in GENIE's own shape."""
    genie_set = get_object_or_404(GenieSet, name=name)
    _, report = _report_or_404(genie_set)
    records = GENIE_EXPORTS[table](report, request.GET.get("source", "llm"))
    response = StreamingHttpResponse(
        exports.jsonl_lines(records), content_type="application/x-ndjson; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{genie_set.name}-{table}.jsonl"'
    return response


@staff_page(can_view_genie)
@require_GET
def report_table_csv(request: HttpRequest, name: str, table: str) -> StreamingHttpResponse:
    """The per-document, per-feature or agreement table as a CSV download."""
    genie_set = get_object_or_404(GenieSet, name=name)
    _, report = _report_or_404(genie_set)
    columns, rows = REPORT_TABLES[table](report)
    return csv_download(columns, rows, f"genie-{genie_set.name}-{table}.csv")
