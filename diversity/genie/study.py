"""Genie as a study type (``core.jobs.study_types``): its pages under ``/manage/genie/``,
its API's analyses and report, ``manage.py analyze_study genie`` (ANALYSIS.md, "Genie").

* the list: every set with its size and newest analysis, and an upload form for a
  judgments file (and GENIE's companion files);
* a set: the newest finished report — novelty profiles (one line per document), the
  per-feature summary with its intervals, the agreement of human and LLM judgments per
  feature and overall when both exist — the tables and downloads, the "Compare" form that
  shows the difference of two chosen models or methods (``diversity.genie.choice``), and
  the form that runs the analysis again (optionally against a ``similarity`` batch);
* ``genie.jsonl`` / ``q_genie.jsonl``: the scores in GENIE's own shape
  (``diversity.genie.views``)."""

from django import forms
from django.http import HttpRequest
from django.urls import reverse
from django.utils.safestring import mark_safe

from annotation.kinds import kinds_reading_text
from core.errors import ServiceError
from core.jobs.forms import bootstrap_field, seed_field
from core.jobs.study_api import analysis_request
from core.jobs.study_types import ApiWords, StudyType
from diversity.genie import plots, presentation, selectors, views
from diversity.genie.access import can_analyse_genie, can_import_genie, can_view_genie
from diversity.genie.api.listing import LIST_API
from diversity.genie.charts import page_charts
from diversity.genie.choice import CompareForm, compared
from diversity.genie.models import GenieSet
from diversity.genie.services import analyses
from diversity.genie.services.imports import companion_files, import_genie, import_summary
from diversity.human_batches import batch_exists, human_batch_field


class RunGenieForm(forms.Form):
    bootstrap = bootstrap_field(
        analyses.MAX_DRAWS,
        analyses.DEFAULT_DRAWS,
        "For the 95 % intervals per feature (resampling documents).",
    )
    seed = seed_field(analyses.DEFAULT_SEED)
    human_batch = human_batch_field(
        analyses.HUMAN_ANALYSIS,
        f"A {kinds_reading_text(analyses.HUMAN_ANALYSIS)} batch of the set's pairs; none: the "
        "set's own batch (genie_batch), else the file's human rows.",
    )


def upload(request: HttpRequest, actor) -> tuple[GenieSet, str]:
    """The list page's upload: a judgments file and GENIE's companion files, all or nothing."""
    file = request.FILES.get("file")
    if file is None:
        raise ServiceError("file: choose a .jsonl, .json or .csv file of judgments")
    genie_set = import_genie(
        request.POST.get("name", ""),
        file,
        filename=file.name,
        description=request.POST.get("description", ""),
        actor=actor,
        **companion_files(request.FILES),
    )
    return genie_set, import_summary(genie_set)


def page_context(request: HttpRequest, genie_set: GenieSet, job, report: dict | None) -> dict:
    context = {"genie_set": genie_set}
    if report is None:
        return context
    human_batch = report["settings"].get("human_batch")
    context.update(
        {
            "downloads": _downloads(genie_set, report),
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
    form = context["compare_form"]
    if form.is_bound and not form.is_valid():
        context["status"] = 400
    return context


def _downloads(genie_set: GenieSet, report: dict) -> list[dict]:
    """The report's JSON, its tables (agreement and models-and-methods when it has them) and
    its scores in GENIE's shape."""
    tables = [("documents", "Documents CSV"), ("features", "Features CSV")]
    if presentation.agreement_rows(report):
        tables.append(("agreement", "Agreement CSV"))
    if presentation.comparison_rows(report):
        tables.append(("comparisons", "Models and methods CSV"))
    tables += [
        ("questions", "Q-level CSV"),
        ("genie-jsonl", "genie.jsonl"),
        ("q-genie-jsonl", "q_genie.jsonl"),
    ]
    files = [("json", "Report JSON"), *tables]
    return [
        {"label": label, "url": reverse(GENIE_PAGES.format(name), args=[genie_set.name])}
        for name, label in files
    ]


GENIE_PAGES = "manage-genie-{}"


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


def command_lines(genie_set: GenieSet, report: dict, seconds: float) -> list[str]:
    lines = [
        f"Analysed Genie set {genie_set.name}: {report['n_documents']} documents, "
        f"{len(report['features'])} features, judged pairs: "
        f"{report['n_judged_pairs']['llm']} llm, {report['n_judged_pairs']['human']} human "
        f"({report['settings']['human_source'] or 'no human judgments'}) "
        f"in {seconds:.1f} s"
    ]
    for source, scores in report["scores"].items():
        for feature, summary in (scores or {}).get("per_feature", {}).items():
            low, high = summary["ci"]
            lines.append(
                f"  {source} {feature}: {summary['mean']:.3f} [{low:.3f}, {high:.3f}] "
                f"over {summary['n_documents']} documents"
            )
    overall = (report.get("agreement") or {}).get("overall")
    if overall:
        rho = overall["spearman"]
        alpha = overall["alpha_interval"]
        lines.append(
            f"  human vs llm on {overall['n_pairs']} pairs: Spearman "
            + (f"{rho['rho']:.3f}" if rho else "undefined")
            + ", Krippendorff alpha (interval) "
            + (f"{alpha:.3f}" if alpha is not None else "undefined")
        )
    return lines


GENIE = StudyType(
    slug="genie",
    label="Genie",
    subject_label="Genie set",
    subject_model=GenieSet,
    job_kind=analyses.JOB_KIND,
    can_view=can_view_genie,
    can_analyse=can_analyse_genie,
    can_import=can_import_genie,
    params=analyses.analysis_params,
    analyse=analyses.analyse_job,
    summary=analyses.job_summary,
    run_form=RunGenieForm,
    rows=selectors.genie_rows,
    list_template="genie/genie_list.html",
    page_template="genie/genie_page.html",
    page_context=page_context,
    charts=page_charts,
    tables={
        "documents": presentation.document_table,
        "features": presentation.feature_table,
        "agreement": presentation.agreement_table,
        "comparisons": presentation.comparison_table,
        "questions": presentation.question_table,
    },
    command_lines=command_lines,
    upload=upload,
    list_api=LIST_API,
    rerun_note="With other bootstrap settings, or another human batch.",
    nav_order=65,
    api_subject="genie",
    api_request=analysis_request(
        "GenieAnalysisRequest", analyses.DEFAULT_DRAWS, analyses.DEFAULT_SEED
    ),
    api_text=ApiWords(
        start_summary="Start a Genie analysis",
        start_description="Runs the Genie analysis (ANALYSIS.md, Genie) as a job, with the "
        "human similarities of a similarity batch (default: the set's own): 202 with the job; "
        "poll its `status_url`, then read `GET …/report`.",
        report_summary="The newest Genie report",
        report_description="The report of the newest finished Genie analysis: novelty per "
        "document and feature, per feature with intervals, human-versus-LLM agreement. 404 "
        "until an analysis has finished.",
    ),
    extra_urls=tuple(views.urlpatterns),
)
