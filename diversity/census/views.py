"""The census pages of the staff site, under ``/manage/census/`` (ANALYSIS.md, "One-Word
Census").

* the list (``/manage/census/``): every census with its size and newest analysis, an upload
  form (reply files and an optional norms file) and a button that analyses a census;
* a census (``/manage/census/<name>/``): the newest finished report — models ranked by
  surprisal, the surprisal × self-distinctness scatter, the modal-share bars next to the
  human norms, the model and category tables — with the CSV and JSON downloads, and the
  form that runs the analysis again (optionally against a ``short_text`` batch).

Views stay thin: the services import and analyse, ``presentation`` and ``plots`` shape the
report for the page.
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
from diversity.census import presentation, selectors
from diversity.census.access import can_analyse_census, can_import_census, can_view_census
from diversity.census.charts import page_charts
from diversity.census.models import Census
from diversity.census.services.analyses import (
    DEFAULT_DRAWS,
    DEFAULT_SEED,
    HUMAN_ANALYSIS,
    JOB_KIND,
    MAX_DRAWS,
    analysis_params,
    latest_report,
)
from diversity.census.services.imports import CensusUpload, import_census
from diversity.human_batches import batch_exists, human_batch_field


class RunCensusForm(forms.Form):
    bootstrap = bootstrap_field(
        MAX_DRAWS, DEFAULT_DRAWS, "For the 90 % intervals of surprisal (docs/CENSUS.md: 2,000)."
    )
    seed = seed_field(DEFAULT_SEED, "docs/CENSUS.md: 7.")
    human_batch = human_batch_field(
        HUMAN_ANALYSIS,
        f"A {kinds_reading_text(HUMAN_ANALYSIS)} batch whose answers give people's norms.",
    )


# the run form's fields as the newest report's parameters may lack them
RUN_DEFAULTS = {"bootstrap": DEFAULT_DRAWS, "seed": DEFAULT_SEED, "human_batch": ""}


# --------------------------------------------------------------------------- helpers


def _report_or_404(census: Census) -> tuple[Job, dict]:
    return report_or_404(latest_report(census), f"Census {census.name}")


def _charts(job: Job, report: dict) -> list[dict]:
    """The report's charts as inline SVG: those the job stored, else drawn (then cached)."""
    return cached_charts("census", job, lambda: page_charts(report))


# --------------------------------------------------------------------------- the list


def _list_context(request: HttpRequest, **extra) -> dict:
    return {
        "rows": selectors.census_rows(),
        "can_import": can_import_census(request.user),
        "can_analyse": can_analyse_census(request.user),
        "default_bootstrap": DEFAULT_DRAWS,
        "default_seed": DEFAULT_SEED,
        **extra,
    }


@staff_page(can_view_census)
@require_GET
def census_list(request: HttpRequest) -> HttpResponse:
    return render(request, "census/census_list.html", _list_context(request))


@staff_page(can_import_census)
@require_POST
def census_upload(request: HttpRequest) -> HttpResponse:
    """The list page's upload: all or nothing, problems listed on the list page."""
    name = request.POST.get("name", "")
    description = request.POST.get("description", "")
    files = [CensusUpload(upload, upload.name) for upload in request.FILES.getlist("files")]
    norms_upload = request.FILES.get("norms")
    norms = CensusUpload(norms_upload, norms_upload.name) if norms_upload else None
    try:
        census = import_census(
            name, files, norms=norms, description=description, actor=Actor.of(request.user)
        )
    except ImportRejected as rejected:
        problems = list(rejected.problems)
    except ServiceError as error:
        problems = [str(error)]
    else:
        messages.success(request, f"Imported census {census.name}.")
        return redirect("manage-census", name=census.name)
    context = _list_context(
        request, problems=problems, form_values={"name": name, "description": description}
    )
    return render(request, "census/census_list.html", context, status=400)


# --------------------------------------------------------------------------- a census


@staff_page(can_view_census)
@require_GET
def census_page(request: HttpRequest, name: str) -> HttpResponse:
    census = get_object_or_404(Census, name=name)
    context = {
        "census": census,
        "files": census.files.all(),
        **analysis_context(census, JOB_KIND, latest_report(census), RunCensusForm, RUN_DEFAULTS),
        "run_url": reverse("manage-census-run", args=[census.name]),
        "can_analyse": can_analyse_census(request.user),
    }
    job, report = context["job"], context["report"]
    if report is not None:
        human_batch = (report.get("human_batch") or {}).get("batch")
        context.update(
            {
                "settings": report["settings"],
                "charts": _charts(job, report),
                "comparisons": presentation.comparisons(report),
                "model_rows": presentation.model_rows(report),
                "category_rows": presentation.category_rows(report),
                "has_norms": bool(report.get("norms")),
                "human_batch": human_batch,
                "human_batch_exists": batch_exists(human_batch),
            }
        )
    return render(request, "census/census_page.html", context)


@staff_page(can_analyse_census)
@require_POST
def run_census(request: HttpRequest, name: str) -> HttpResponse:
    """Start an analysis job; JSON (for the page's script) or a redirect to the census."""
    census = get_object_or_404(Census, name=name)
    return start_job_from_page(
        request,
        JOB_KIND,
        census,
        RunCensusForm(request.POST),
        lambda data: analysis_params(data["bootstrap"], data["seed"], data["human_batch"] or None),
        back_to=reverse("manage-census", args=[census.name]),
        finished=f"Census {census.name} analysed.",
    )


# --------------------------------------------------------------------------- downloads


@staff_page(can_view_census)
@require_GET
def report_json(request: HttpRequest, name: str) -> FileResponse:
    census = get_object_or_404(Census, name=name)
    job, _ = _report_or_404(census)
    return report_file(job, f"census-{census.name}-report.json")


REPORT_TABLES = {"models": presentation.model_table, "categories": presentation.category_table}


@staff_page(can_view_census)
@require_GET
def report_table_csv(request: HttpRequest, name: str, table: str) -> StreamingHttpResponse:
    """The per-model or per-category table as a CSV download."""
    census = get_object_or_404(Census, name=name)
    _, report = _report_or_404(census)
    columns, rows = REPORT_TABLES[table](report)
    return csv_download(columns, rows, f"census-{census.name}-{table}.csv")
