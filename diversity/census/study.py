"""The One-Word Census as a study type (``core.jobs.study_types``): its pages under
``/manage/census/``, its API's analyses and report, ``manage.py analyze_study census``.

* the list: every census with its size and newest analysis, an upload form (reply files and
  an optional norms file) and a button that analyses a census;
* a census: the newest finished report — models ranked by surprisal, the surprisal ×
  self-distinctness scatter, the modal-share bars next to the human norms, the model and
  category tables — with the CSV and JSON downloads, and the form that runs the analysis
  again (optionally against a ``short_text`` batch).

The services import and analyse; ``presentation`` and ``charts`` shape the report for the
page; this module says which is which."""

from django import forms

from annotation.kinds import kinds_reading_text
from core.jobs.forms import bootstrap_field, seed_field
from core.jobs.study_api import analysis_request
from core.jobs.study_types import ApiWords, StudyType
from diversity.census import presentation, selectors
from diversity.census.access import can_analyse_census, can_import_census, can_view_census
from diversity.census.api.listing import LIST_API
from diversity.census.charts import page_charts
from diversity.census.models import Census
from diversity.census.services import analyses
from diversity.census.services.imports import CensusUpload, import_census
from diversity.human_batches import batch_exists, human_batch_field


class RunCensusForm(forms.Form):
    bootstrap = bootstrap_field(
        analyses.MAX_DRAWS,
        analyses.DEFAULT_DRAWS,
        "Resamples for the 90 % intervals of surprisal; the published figures use 2,000.",
    )
    seed = seed_field(analyses.DEFAULT_SEED, "The published figures use 7.")
    human_batch = human_batch_field(
        analyses.HUMAN_ANALYSIS,
        f"A {kinds_reading_text(analyses.HUMAN_ANALYSIS)} batch whose answers give people's norms.",
    )


def upload(request, actor) -> tuple[Census, str]:
    """The list page's upload: reply files and an optional norms file, all or nothing."""
    files = [CensusUpload(upload, upload.name) for upload in request.FILES.getlist("files")]
    norms_upload = request.FILES.get("norms")
    norms = CensusUpload(norms_upload, norms_upload.name) if norms_upload else None
    census = import_census(
        request.POST.get("name", ""),
        files,
        norms=norms,
        description=request.POST.get("description", ""),
        actor=actor,
    )
    return census, f"Imported census {census.name}."


def page_context(request, census: Census, job, report: dict | None) -> dict:
    context = {"census": census, "files": census.files.all()}
    if report is not None:
        human_batch = (report.get("human_batch") or {}).get("batch")
        context.update(
            {
                "comparisons": presentation.comparisons(report),
                "model_rows": presentation.model_rows(report),
                "category_rows": presentation.category_rows(report),
                "has_norms": bool(report.get("norms")),
                "human_batch": human_batch,
                "human_batch_exists": batch_exists(human_batch),
            }
        )
    return context


def command_lines(census: Census, report: dict, seconds: float) -> list[str]:
    lines = [
        f"Analysed census {census.name}: {report['n_models']} models, "
        f"{report['n_categories']} categories, {report['n_answers']} answers "
        f"({report['n_failed']} failed cells) in {seconds:.1f} s"
    ]
    for key, label in (("published", "published model column"), ("computed", "computed")):
        comparison = (report.get("norms") or {}).get(key)
        if comparison and comparison["n_categories"]:
            lines.append(_comparison_line(f"against the imported norms ({label})", comparison))
    if report.get("human_batch"):
        comparison = report["human_batch"]["computed"]
        if comparison["n_categories"]:
            lines.append(
                _comparison_line(f"against batch {report['human_batch']['batch']}", comparison)
            )
    return lines


def _comparison_line(title: str, comparison: dict) -> str:
    return (
        f"  {title}: model field more concentrated in {comparison['n_model_more_concentrated']} "
        f"of {comparison['n_categories']} categories, mean modal share "
        f"{comparison['mean_model_share']:.3f} versus {comparison['mean_human_share']:.3f}"
    )


CENSUS = StudyType(
    slug="census",
    label="Census",
    subject_label="census",
    subject_model=Census,
    job_kind=analyses.JOB_KIND,
    can_view=can_view_census,
    can_analyse=can_analyse_census,
    can_import=can_import_census,
    params=analyses.analysis_params,
    analyse=analyses.analyse_job,
    summary=analyses.job_summary,
    run_form=RunCensusForm,
    rows=selectors.census_rows,
    list_template="census/census_list.html",
    page_template="census/census_page.html",
    page_context=page_context,
    charts=page_charts,
    tables={"models": presentation.model_table, "categories": presentation.category_table},
    command_lines=command_lines,
    upload=upload,
    list_api=LIST_API,
    rerun_note="With other bootstrap settings, or against a human batch.",
    nav_order=60,
    api_request=analysis_request(
        "CensusAnalysisRequest", analyses.DEFAULT_DRAWS, analyses.DEFAULT_SEED
    ),
    api_text=ApiWords(
        start_summary="Start a census analysis",
        start_description="Runs the census analysis (ANALYSIS.md, One-Word Census) as a job, "
        "optionally against a short_text batch of human answers: 202 with the job; poll its "
        "`status_url`, then read `GET …/report`.",
        report_summary="The newest census report",
        report_description="The report of the newest finished census analysis: per model, per "
        "category, against the human norms. 404 until an analysis has finished.",
    ),
)
