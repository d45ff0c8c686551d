"""The corpus pages of the staff site, under ``/manage/corpora/`` (ANALYSIS.md, "Response
pools").

* the list (``/manage/corpora/``): every corpus with its size, embeddings and newest
  analysis, and the form that imports a response pool (a ``corpus_import`` job: the page
  is sent to ``?job=<id>``, follows its progress, then links to the new corpus or lists
  the file's problems);
* a corpus (``/manage/corpora/<name>/``): the newest finished report — the intra-model
  histogram, the model × model heat map, the top-N curve with its band, the model,
  category and human-judgment tables (small groups marked), the per-query table linking
  to each query's drill-down — with CSV/JSON/figure downloads, the form that runs the
  analysis (a job whose progress the page follows), the embeddings panel (import a file,
  or compute them with the local model when it is installed: a job followed the same way
  as the pool import) and the form that makes a batch from a selection;
* a query (``/manage/corpora/<name>/query/<query id>``): its responses on their first two
  principal axes, coloured by model, each point a link to its text in the table below.

Views stay thin: ``services`` analyse and select, ``selectors`` read, ``presentation`` and
``plots`` shape the report for the page.
"""

import csv
from collections.abc import Callable

from django.conf import settings
from django.contrib import messages
from django.http import (
    Http404,
    HttpRequest,
    HttpResponse,
    JsonResponse,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_POST

from analysis.plots import source_slots
from core.access import staff_page
from core.audit import Actor
from core.errors import ServiceError
from core.jobs.pages import form_problems, job_status, start_job_from_page
from core.jobs.subject_pages import RUNNING_STATES, active_job, analysis_context, cached_charts
from core.models import Job
from core.tabular import ImportRejected
from diversity.corpora import plots, presentation, selectors
from diversity.corpora.access import (
    can_analyse_corpora,
    can_change_corpora,
    can_import_corpora,
    can_make_batches,
    can_view_corpora,
)
from diversity.corpora.forms import RunCorpusForm, SelectionForm
from diversity.corpora.models import Corpus
from diversity.corpora.services import embedding_jobs, imports, local_embedding
from diversity.corpora.services.analyses import (
    DEFAULT_DRAWS,
    DEFAULT_SEED,
    JOB_KIND,
    analysis_params,
    job_file,
    latest_analysis,
)
from diversity.corpora.services.batches import make_batch
from diversity.corpora.storage import DTYPES

QUERY_ROWS_SHOWN = 200
# the run form's fields as the newest report's parameters may lack them
RUN_DEFAULTS = {
    "bootstrap": DEFAULT_DRAWS,
    "seed": DEFAULT_SEED,
    "lexical": False,
    "human_batch": "",
}
FIGURE_TYPES = {"svg": "image/svg+xml", "pdf": "application/pdf"}
FIGURE_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


# --------------------------------------------------------------------------- helpers


def _job_problems(job: Job) -> list[str]:
    """A failed job's problems (every ``FILE:LINE: field: message`` of a refused file)."""
    return (job.result or {}).get("problems") or [job.message or "the job failed (no reason)"]


def _with_job(url: str, job: Job) -> str:
    """``url`` with ``?job=``: the page then follows the job and shows how it ended."""
    return f"{url}?job={job.pk}"


def _charts(job: Job, report: dict) -> list[dict]:
    """The report's charts as inline SVG, drawn once per finished job (then cached)."""
    return cached_charts(
        "corpus",
        job,
        lambda: [
            {"key": name, "title": title, "caption": caption, "svg": drawing.svg()}
            for name, (title, caption, drawing) in plots.drawings(report).items()
        ],
    )


def _table(report: dict, key: str) -> dict:
    columns, rows = presentation.TABLES[key](report)
    keys = [column.replace(".", "_") for column in columns]  # template lookups
    return {"columns": columns, "rows": [dict(zip(keys, row, strict=True)) for row in rows]}


# The per-query columns the page can rank all queries by (highest first), beyond the
# first QUERY_ROWS_SHOWN that its table shows and sorts in the browser.
QUERY_RANKINGS = {
    "intra_model_mean": "intra-model",
    "inter_model_mean": "inter-model",
    "duplicate_share": "duplicate share",
}


def _ranked_value(row: dict, column: str) -> float:
    try:
        return float(row[column])
    except (KeyError, TypeError, ValueError):
        return float("-inf")  # an empty cell (no pairs) ranks last


def _query_rows(job: Job, category: str | None, rank: str | None) -> tuple[list[dict], int]:
    """The first ``QUERY_ROWS_SHOWN`` rows of the per-query table (of ``category``), in
    file order or ranked by ``rank`` (a ``QUERY_RANKINGS`` column, highest first) over
    every query."""
    path = job_file(job, "queries")
    if path is None:
        return [], 0
    with open(path, encoding="utf-8", newline="") as stream:
        rows = csv.DictReader(stream)
        if category:
            rows = (row for row in rows if row["category"] == category)
        rows = list(rows)
    if rank in QUERY_RANKINGS:
        rows.sort(key=lambda row: _ranked_value(row, rank), reverse=True)
    return rows[:QUERY_ROWS_SHOWN], len(rows)


# --------------------------------------------------------------------------- the list


def _list_context(request: HttpRequest, **extra) -> dict:
    return {
        "rows": selectors.corpus_rows(),
        "can_import": can_import_corpora(request.user),
        "upload_max_mb": settings.UPLOAD_MAX_BYTES // (1024 * 1024),
        **extra,
    }


def _import_outcome(job: Job) -> dict:
    """The list page's account of the import it follows: its progress while it runs, then
    the new corpus, or the file's problems (with the name and title to try again)."""
    params = job.params or {}
    outcome = {"followed_job": job, "upload_name": params.get("filename", "")}
    if job.state in RUNNING_STATES:
        outcome["followed_status"] = job_status(job)
    elif job.state == Job.State.SUCCEEDED:
        imported = job.result or {}
        outcome["imported"] = imported
        outcome["imported_corpus"] = Corpus.objects.filter(name=imported.get("corpus")).first()
    else:
        outcome["problems"] = _job_problems(job)
        outcome["form_values"] = {"name": params.get("name", ""), "title": params.get("title", "")}
    return outcome


@staff_page(can_view_corpora)
@require_GET
def corpus_list(request: HttpRequest) -> HttpResponse:
    outcome = {}
    if can_import_corpora(request.user):
        job = selectors.followed_job(request.GET.get("job"), imports.JOB_KIND, user=request.user)
        if job is not None:
            outcome = _import_outcome(job)
    return render(request, "corpora/corpus_list.html", _list_context(request, **outcome))


@staff_page(can_import_corpora)
@require_POST
def corpus_upload(request: HttpRequest) -> HttpResponse:
    """The list page's upload: start the import job and follow it on the list page; a
    request refused at once (name, title, file type) is shown there with its problems."""
    name = request.POST.get("name", "")
    title = request.POST.get("title", "")
    upload = request.FILES.get("file")
    try:
        job = imports.start_import(name, upload, title=title, user=request.user)
    except ImportRejected as rejected:
        problems = list(rejected.problems)
    except ServiceError as error:
        problems = [str(error)]
    else:
        return redirect(_with_job(reverse("manage-corpora-list"), job))
    context = _list_context(
        request,
        problems=problems,
        upload_name=upload.name if upload is not None else "",
        form_values={"name": name, "title": title},
    )
    return render(request, "corpora/corpus_list.html", context, status=400)


# --------------------------------------------------------------------------- a corpus


def _embeddings_context(request: HttpRequest, corpus: Corpus) -> dict:
    """The embeddings panel, and the embeddings job the page follows or was sent to show."""
    if not can_change_corpora(request.user):
        return {"can_change": False}
    context = {
        "can_change": True,
        "local_model": local_embedding.local_model_available(),
        "dtypes": list(DTYPES),
        "embeddings_url": reverse("manage-corpus-embeddings", args=[corpus.name]),
        "compute_url": reverse("manage-corpus-embeddings-compute", args=[corpus.name]),
        "embeddings_job": active_job(corpus, embedding_jobs.JOB_KIND),
    }
    followed = selectors.followed_job(request.GET.get("job"), embedding_jobs.JOB_KIND, corpus)
    if followed is None:
        return context
    params = followed.params or {}
    context["upload_name"] = params.get("filename", "")
    if followed.state in RUNNING_STATES:
        context["embeddings_job"] = followed
    elif followed.state == Job.State.SUCCEEDED:
        context["embeddings_done"] = followed
    else:
        context["problems"] = _job_problems(followed)
    return context


def _render_corpus_page(
    request: HttpRequest, corpus: Corpus, *, status: int = 200, **extra
) -> HttpResponse:
    context = {
        "corpus": corpus,
        **analysis_context(corpus, JOB_KIND, latest_analysis(corpus), RunCorpusForm, RUN_DEFAULTS),
        "selection_form": SelectionForm(corpus),
        "run_url": reverse("manage-corpus-run", args=[corpus.name]),
        "can_analyse": can_analyse_corpora(request.user),
        "can_make_batches": can_make_batches(request.user),
        "selections": corpus.selections.select_related("batch")[:20],
        **_embeddings_context(request, corpus),
        **extra,
    }
    job, report = context["job"], context["report"]
    # One progress card: a running analysis, else a running embeddings job (the analysis
    # waits for the embeddings it would use).
    active = context["active_job"] or context.get("embeddings_job")
    context["active_job"] = active
    context["active_status"] = job_status(active) if active else None
    context["active_is_embeddings"] = active is not None and active.kind == embedding_jobs.JOB_KIND
    if report is not None:
        category = request.GET.get("category") or None
        rank = request.GET.get("rank") if request.GET.get("rank") in QUERY_RANKINGS else None
        query_rows, n_query_rows = _query_rows(job, category, rank)
        slots = source_slots(report["models"])
        models = _table(report, "models")
        for row in models["rows"]:
            row["slot"] = slots.get(row["model"])
        context.update(
            {
                "settings": report["settings"],
                "pooled_share_above": [
                    (f"{t:g}", report["intra_model"]["pooled"].get(f"share_above_{t:g}"))
                    for t in report["settings"]["thresholds"]
                ],
                "charts": _charts(job, report),
                "models_table": models,
                "categories_table": _table(report, "categories"),
                "human_table": _table(report, "human"),
                "most_similar": report["inter_model"]["most_similar"],
                "least_similar": report["inter_model"]["least_similar"],
                "query_rows": query_rows,
                "n_query_rows": n_query_rows,
                "query_rows_shown": QUERY_ROWS_SHOWN,
                "query_rank": rank,
                "query_rank_label": QUERY_RANKINGS.get(rank, ""),
                "query_rankings": QUERY_RANKINGS.items(),
                "query_category": category,
                "query_categories": sorted(report.get("by_category", {})),
                "table_keys": list(presentation.TABLES),
            }
        )
    return render(request, "corpora/corpus_page.html", context, status=status)


@staff_page(can_view_corpora)
@require_GET
def corpus_page(request: HttpRequest, name: str) -> HttpResponse:
    return _render_corpus_page(request, get_object_or_404(Corpus, name=name))


def _start_embeddings_job(
    request: HttpRequest, corpus: Corpus, start: Callable[[str], Job]
) -> HttpResponse:
    """Start an embeddings job (``start(dtype)``) and follow it on the corpus page; a request
    refused at once (file type, dtype, no local model) is shown there with its problems."""
    upload = request.FILES.get("file")
    try:
        job = start(request.POST.get("dtype", "float32"))
    except ImportRejected as rejected:
        problems = list(rejected.problems)
    except ServiceError as error:
        problems = [str(error)]
    else:
        return redirect(_with_job(reverse("manage-corpus", args=[corpus.name]), job))
    upload_name = upload.name if upload is not None else ""
    return _render_corpus_page(
        request, corpus, status=400, problems=problems, upload_name=upload_name
    )


@staff_page(can_change_corpora)
@require_POST
def embeddings_upload(request: HttpRequest, name: str) -> HttpResponse:
    """The embeddings panel's upload: a job that replaces the corpus's embeddings."""
    corpus = get_object_or_404(Corpus, name=name)
    return _start_embeddings_job(
        request,
        corpus,
        lambda dtype: embedding_jobs.start_embeddings_import(
            corpus, request.FILES.get("file"), dtype=dtype, user=request.user
        ),
    )


@staff_page(can_change_corpora)
@require_POST
def embeddings_compute(request: HttpRequest, name: str) -> HttpResponse:
    """The embeddings panel's button: a job that embeds every response with the local
    model (continuing an unfinished run)."""
    corpus = get_object_or_404(Corpus, name=name)
    return _start_embeddings_job(
        request,
        corpus,
        lambda dtype: embedding_jobs.start_embeddings_compute(
            corpus, dtype=dtype, user=request.user
        ),
    )


@staff_page(can_analyse_corpora)
@require_POST
def run_analysis(request: HttpRequest, name: str) -> HttpResponse:
    """Start an analysis job; JSON (for the page's script) or a redirect to the corpus."""
    corpus = get_object_or_404(Corpus, name=name)
    return start_job_from_page(
        request,
        JOB_KIND,
        corpus,
        RunCorpusForm(request.POST),
        lambda data: analysis_params(
            data["bootstrap"], data["seed"], data["lexical"], data["human_batch"] or None
        ),
        back_to=reverse("manage-corpus", args=[corpus.name]),
        finished=f"Corpus {corpus.name} analysed.",
    )


@staff_page(can_make_batches)
@require_POST
def make_selection_batch(request: HttpRequest, name: str) -> HttpResponse:
    """Make a draft batch from a selection of the corpus, then show the new batch."""
    corpus = get_object_or_404(Corpus, name=name)
    form = SelectionForm(corpus, request.POST)
    try:
        if not form.is_valid():
            raise ServiceError(form_problems(form))
        data = form.cleaned_data
        batch, selection = make_batch(
            corpus,
            slug=data["slug"],
            title=data["title"],
            rule=data["rule"],
            per_query=data["per_query"],
            seed=data["seed"],
            categories=data["categories"],
            annotations_per_item=data["annotations_per_item"],
            actor=Actor.of(request.user),
        )
    except ServiceError as error:
        messages.error(request, f"No batch made — {error}")
        return redirect(reverse("manage-corpus", args=[corpus.name]) + "#make-batch")
    messages.success(
        request,
        f"Draft batch {batch.slug} made from {selection.counts.get('items', 0)} responses of "
        f"corpus {corpus.name}.",
    )
    return redirect("manage-batch", slug=batch.slug)


# --------------------------------------------------------------------------- a query


def _query_id(request: HttpRequest, in_path: str | None) -> str:
    """The query's id: from the path (already percent-decoded), or, for the ids ``.`` and
    ``..`` that no path can carry, from ``?id=`` (``templatetags.corpus_links``)."""
    if in_path is not None:
        return in_path
    query_id = request.GET.get("id", "")
    if not query_id:
        raise Http404("Which query? Give its id in the path or as ?id=.")
    return query_id


@staff_page(can_view_corpora)
@require_GET
def query_page(request: HttpRequest, name: str, query_id: str | None = None) -> HttpResponse:
    corpus = get_object_or_404(Corpus, name=name)
    query_id = _query_id(request, query_id)
    detail = selectors.query_detail(corpus, query_id)
    if detail is None:
        raise Http404(f"Corpus {corpus.name} has no query {query_id!r}.")
    names = list(corpus.corpus_models.values_list("name", flat=True))
    colours, slots = plots.model_colours(names), source_slots(names)
    responses = [{**r, "slot": slots.get(r["model"])} for r in detail.responses]
    models = [{**m, "slot": slots.get(m["model"])} for m in detail.models]
    return render(
        request,
        "corpora/query_page.html",
        {
            "corpus": corpus,
            "detail": detail,
            "query": detail.query,
            "responses": responses,
            "models": models,
            "projection": mark_safe(plots.projection_svg(responses, colours) or ""),  # noqa: S308
            "unique_models_1": detail.unique_models[0] if detail.unique_models else None,
        },
    )


@staff_page(can_view_corpora)
@require_GET
def query_json(request: HttpRequest, name: str, query_id: str | None = None) -> JsonResponse:
    corpus = get_object_or_404(Corpus, name=name)
    query_id = _query_id(request, query_id)
    detail = selectors.query_detail(corpus, query_id)
    if detail is None:
        raise Http404(f"Corpus {corpus.name} has no query {query_id!r}.")
    response = JsonResponse(selectors.projection_payload(corpus, detail))
    filename = f"{corpus.name}-query-projection.json"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response
