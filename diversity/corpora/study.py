"""Corpora as a study type (``core.jobs.study_types``; ANALYSIS.md, "Response pools"): the
list and its import under ``/manage/corpora/`` (a job the list page follows), a corpus's
page with its homogeneity report, charts, figure files and tables, ``POST
/api/v1/corpora/<name>/analyses`` and ``GET …/report``, ``manage.py analyze_corpus`` and
``analyze_study corpora``.

What stays the corpus's own: its analysis runs in parts over the job workers
(``services.analysis_parts`` registers the ``corpus_analysis`` runner), its page adds the
embeddings panel, the selection that makes a batch and the per-query table
(``views.page_context``), and its pages of one query and its API of reading, importing and
selecting (``api``)."""

from django.urls import path
from django.views.generic import RedirectView

from core.jobs.study_types import ApiWords, StudyType
from diversity.corpora import downloads, plots, presentation, selectors, views
from diversity.corpora.access import can_analyse_corpora, can_import_corpora, can_view_corpora
from diversity.corpora.api.views import CorpusAnalysisRequest, ReportResponse
from diversity.corpora.forms import RunCorpusForm
from diversity.corpora.models import Corpus
from diversity.corpora.services import imports
from diversity.corpora.services.analyses import JOB_KIND, analysis_params


def _text(value) -> str:
    return "—" if value is None else f"{value:.3f}"


def command_lines(corpus: Corpus, report: dict, seconds: float) -> list[str]:
    pooled = report["intra_model"]["pooled"]["mean"]
    top = report["top_n"]["mean_unique_models"]
    return [
        f"Analysed corpus {corpus.name} ({report['basis']}): {report['n_queries']} queries, "
        f"{report['n_models']} models, {report['n_responses']} responses in {seconds:.1f} s",
        f"  intra-model mean {_text(pooled)}; unique models among 1 / 10 nearest: "
        f"{_text(top[0])} / {_text(top[9] if len(top) > 9 else None)}",
    ]


def start_upload(request, actor):
    """The list page's upload: the import job of the file (``imports.start_import``)."""
    return imports.start_import(
        request.POST.get("name", ""),
        request.FILES.get("file"),
        title=request.POST.get("title", ""),
        user=request.user,
    )


# A query id is percent-encoded whole in links (``/`` as %2F); the ids "." and ".." go in
# ``?id=`` instead (diversity.corpora.templatetags.corpus_links).
SUBJECT = "manage/corpora/<slug:name>/"
EXTRA_URLS = (
    path(f"{SUBJECT}embeddings", views.embeddings_upload, name="manage-corpora-embeddings"),
    path(
        f"{SUBJECT}embeddings/compute",
        views.embeddings_compute,
        name="manage-corpora-embeddings-compute",
    ),
    path(f"{SUBJECT}batch", views.make_selection_batch, name="manage-corpora-batch"),
    path(
        f"{SUBJECT}query.json/<path:query_id>", views.query_json, name="manage-corpora-query-json"
    ),
    path(
        f"{SUBJECT}query.json/",
        views.query_json,
        name="manage-corpora-query-json-by-parameter",
    ),
    path(f"{SUBJECT}query/<path:query_id>", views.query_page, name="manage-corpora-query"),
    path(f"{SUBJECT}query/", views.query_page, name="manage-corpora-query-by-parameter"),
    # where the tables were downloaded before they sat beside the report's other files
    path(
        f"{SUBJECT}tables/<slug:table>.csv",
        RedirectView.as_view(url="../%(table)s.csv", permanent=True),
    ),
)

CORPORA = StudyType(
    slug="corpora",
    label="Corpora",
    subject_label="corpus",
    subject_model=Corpus,
    job_kind=JOB_KIND,
    can_view=can_view_corpora,
    can_analyse=can_analyse_corpora,
    params=analysis_params,
    analyse=None,  # in parts over the workers: services.analysis_parts
    run_form=RunCorpusForm,
    rows=selectors.corpus_rows,
    list_template="corpora/corpus_list.html",
    page_template="corpora/corpus_page.html",
    page_context=views.page_context,
    rerun_note="With other bootstrap settings, on the lexical basis, or linked to another batch.",
    figures=plots.drawings,
    figure_tables={"intra-histogram": "histogram", "heatmap": "inter-model", "top-n": "top-n"},
    tables=presentation.TABLES,
    job_tables={"queries": downloads.queries_table, "responses": downloads.response_table},
    listed_tables=("queries", "responses"),
    table_labels={"responses": "Typicality CSV"},
    file_stem="corpus",
    command_lines=command_lines,
    upload=start_upload,
    can_import=can_import_corpora,
    import_job_kind=imports.JOB_KIND,
    nav_order=70,
    api_tag="corpora",
    api_text=ApiWords(
        start_summary="Start a corpus analysis",
        start_description="Runs the homogeneity analysis as a job (on the embeddings; with "
        "`lexical`, or without embeddings, on TF-IDF vectors), linking the ratings of the "
        "batches made from the corpus and of `human_batch`: 202 with the job; poll its "
        "`status_url`, then read `GET …/report`.",
        report_summary="The newest corpus report",
        report_description="The report of the newest finished analysis (ANALYSIS.md, "
        "Response pools): `intra_model`, `inter_model`, `top_n`, `lexical`, `by_category`, "
        "`by_subcategory`, `human_judgments`. 404 until an analysis has finished.",
    ),
    api_request=CorpusAnalysisRequest,
    api_report=ReportResponse,
    extra_urls=EXTRA_URLS,
)
