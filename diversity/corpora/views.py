"""The corpus pages' own parts (ANALYSIS.md, "Response pools"); the list, the upload, a
corpus's report page, its "Run" form and downloads are the study-type scaffold's
(``diversity.corpora.study``, ``core.jobs.study_views``).

* what a corpus's page adds to the scaffold's (``page_context``): the summary and the
  model, category, human-judgment and per-query tables (the first 200, ``?category=``
  narrows and ``?rank=`` ranks them), the embeddings panel (import a file, or compute them
  with the local model when it is installed: a job the page follows by ``?job=``) and the
  form that makes a batch from a selection, with one progress card for the analysis or
  the embeddings job;
* the embeddings panel's two forms and the selection form's target;
* a query (``/manage/corpora/<name>/query/<query id>``): its responses on their first two
  principal axes, coloured by model, each point a link to its text in the table below.

Views stay thin: ``services`` analyse and select, ``selectors`` read, ``presentation`` and
``plots`` shape the report for the page.
"""

import csv
from collections.abc import Callable

from django.contrib import messages
from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import content_disposition_header
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_POST

from analysis.plots import source_slots
from core.access import staff_page
from core.audit import Actor
from core.errors import ServiceError
from core.jobs.pages import form_problems, job_status
from core.jobs.study_types import study_type
from core.jobs.study_views import render_subject_page
from core.jobs.subject_pages import (
    RUNNING_STATES,
    active_job,
    followed_job,
    job_problems,
    with_job,
)
from core.models import Job
from core.tabular import ImportRejected
from diversity.corpora import plots, presentation, selectors
from diversity.corpora.access import (
    can_change_corpora,
    can_make_batches,
    can_view_corpora,
)
from diversity.corpora.forms import SelectionForm
from diversity.corpora.models import Corpus
from diversity.corpora.services import embedding_jobs, local_embedding
from diversity.corpora.services.analyses import JOB_KIND, job_file
from diversity.corpora.services.batches import make_batch
from diversity.corpora.storage import DTYPES

QUERY_ROWS_SHOWN = 200


# --------------------------------------------------------------------------- helpers


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


# --------------------------------------------------------------------------- a corpus


def _embeddings_context(request: HttpRequest, corpus: Corpus) -> dict:
    """The embeddings panel, and the embeddings job the page follows or was sent to show."""
    if not can_change_corpora(request.user):
        return {"can_change": False}
    context = {
        "can_change": True,
        "local_model": local_embedding.local_model_available(),
        "dtypes": list(DTYPES),
        "embeddings_url": reverse("manage-corpora-embeddings", args=[corpus.name]),
        "compute_url": reverse("manage-corpora-embeddings-compute", args=[corpus.name]),
        "embeddings_job": active_job(corpus, embedding_jobs.JOB_KIND),
    }
    followed = followed_job(request.GET.get("job"), embedding_jobs.JOB_KIND, corpus)
    if followed is None:
        return context
    params = followed.params or {}
    context["upload_name"] = params.get("filename", "")
    if followed.state in RUNNING_STATES:
        context["embeddings_job"] = followed
    elif followed.state == Job.State.SUCCEEDED:
        context["embeddings_done"] = followed
    else:
        context["problems"] = job_problems(followed)
    return context


def _report_context(request: HttpRequest, job: Job, report: dict) -> dict:
    """The report's own sections: its summary figures and tables, the per-query table."""
    category = request.GET.get("category") or None
    rank = request.GET.get("rank") if request.GET.get("rank") in QUERY_RANKINGS else None
    query_rows, n_query_rows = _query_rows(job, category, rank)
    slots = source_slots(report["models"])
    models = _table(report, "models")
    for row in models["rows"]:
        row["slot"] = slots.get(row["model"])
    return {
        "pooled_share_above": [
            (f"{t:g}", report["intra_model"]["pooled"].get(f"share_above_{t:g}"))
            for t in report["settings"]["thresholds"]
        ],
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
    }


def page_context(request: HttpRequest, corpus: Corpus, job: Job | None, report) -> dict:
    """What a corpus's page shows beyond the scaffold's (``study.CORPORA.page_context``)."""
    context = {
        "corpus": corpus,
        "selection_form": SelectionForm(corpus),
        "can_make_batches": can_make_batches(request.user),
        "selections": corpus.selections.select_related("batch")[:20],
        **_embeddings_context(request, corpus),
    }
    # One progress card: a running analysis, else a running embeddings job (the analysis
    # waits for the embeddings it would use).
    if active_job(corpus, JOB_KIND) is None and context.get("embeddings_job") is not None:
        running = context["embeddings_job"]
        context.update(
            active_job=running, active_status=job_status(running), active_is_embeddings=True
        )
    if report is not None:
        context.update(_report_context(request, job, report))
    return context


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
        return redirect(with_job(reverse("manage-corpora", args=[corpus.name]), job))
    upload_name = upload.name if upload is not None else ""
    return render_subject_page(
        request,
        study_type("corpora"),
        corpus,
        status=400,
        problems=problems,
        upload_name=upload_name,
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


@staff_page(can_make_batches)
@require_POST
def make_selection_batch(request: HttpRequest, name: str) -> HttpResponse:
    """Make a draft batch from a selection of the corpus, then show the new batch."""
    corpus = get_object_or_404(Corpus, name=name)
    form = SelectionForm(corpus, request.POST)
    try:
        if not form.is_valid():
            raise ServiceError(form_problems(form))
        # the form's fields are make_batch's settings, by name
        batch, selection = make_batch(corpus, **form.cleaned_data, actor=Actor.of(request.user))
    except ServiceError as error:
        messages.error(request, f"No batch made — {error}")
        return redirect(reverse("manage-corpora", args=[corpus.name]) + "#make-batch")
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


def _query_detail(request: HttpRequest, name: str, query_id: str | None):
    """The corpus ``name`` and its query's drill-down, or a 404 naming what is missing."""
    corpus = get_object_or_404(Corpus, name=name)
    query_id = _query_id(request, query_id)
    detail = selectors.query_detail(corpus, query_id)
    if detail is None:
        raise Http404(f"Corpus {corpus.name} has no query {query_id!r}.")
    return corpus, detail


@staff_page(can_view_corpora)
@require_GET
def query_page(request: HttpRequest, name: str, query_id: str | None = None) -> HttpResponse:
    corpus, detail = _query_detail(request, name, query_id)
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
    corpus, detail = _query_detail(request, name, query_id)
    response = JsonResponse(selectors.projection_payload(corpus, detail))
    filename = f"{corpus.name}-query-projection.json"
    response["Content-Disposition"] = content_disposition_header(True, filename)
    return response
