"""Reads of the corpus pages and API: the list of corpora, and one query's drill-down.

``query_detail`` loads one query's pool, projects it to two dimensions
(``diversity.homogeneity.projection.pca_2d``) on the basis of the newest analysis (the
embeddings, or TF-IDF when that analysis was lexical or the corpus has none), and measures
it again (``measure_query``: a pool is small) for its per-model figures; the typicality of
each response is that of the measure, equal to the analysis's on the same basis.
"""

from dataclasses import dataclass

import numpy as np
from django.db.models import Max, Q

from core.models import Job
from diversity.corpora.loading import (
    QueryInfo,
    pool_responses,
    pool_vectors,
    query_structure,
)
from diversity.corpora.models import Corpus
from diversity.corpora.services.analyses import BASIS_TFIDF, JOB_KIND, latest_job
from diversity.corpora.storage import open_embeddings
from diversity.homogeneity.pipeline import QueryPool, measure_query
from diversity.homogeneity.projection import pca_2d
from diversity.homogeneity.report import json_number

__all__ = ["QueryDetail", "corpus_rows", "query_detail"]


def corpus_rows() -> list[dict]:
    """Every corpus (by name) with when its newest analysis finished (or None), in one
    query whatever the number of corpora."""
    corpora = Corpus.objects.annotate(
        analysed_at=Max(
            "jobs__finished_at",
            filter=Q(jobs__kind=JOB_KIND, jobs__state=Job.State.SUCCEEDED),
        )
    ).order_by("name")
    return [{"subject": corpus, "analysed_at": corpus.analysed_at} for corpus in corpora]


@dataclass(frozen=True)
class QueryDetail:
    """One query's responses (pool order: model name, then sample) with their 2-D position,
    and its per-model figures."""

    query: QueryInfo
    basis: str
    explained: list[float]
    responses: list[dict]
    models: list[dict]
    inter_model_mean: float | None
    unique_models: list[float | None]


def _basis(corpus: Corpus, job: Job | None) -> str:
    if job is not None and (job.result or {}).get("basis") == BASIS_TFIDF:
        return BASIS_TFIDF
    return "embeddings" if corpus.has_embeddings else BASIS_TFIDF


def query_detail(corpus: Corpus, query_id: str) -> QueryDetail | None:
    """The drill-down of query ``query_id`` (None if the corpus has no such query)."""
    structure = query_structure(corpus, query_id)
    if structure is None:
        return None
    query = structure.queries[0]
    responses = next(iter(pool_responses(corpus, structure, [query])), None)
    if responses is None:
        return None
    basis = _basis(corpus, latest_job(corpus))
    embeddings = open_embeddings(corpus) if basis != BASIS_TFIDF else None
    if embeddings is None:
        basis = BASIS_TFIDF
    vectors = pool_vectors(responses, embeddings)
    projection = pca_2d(vectors)
    measured = measure_query(
        QueryPool(
            query_id=query.query_id,
            embeddings=vectors,
            model_index=responses.model_index,
            sample=responses.sample,
            texts=responses.texts,
        ),
        n_models=len(structure.model_names),
    )
    names = structure.model_names
    rows = []
    for i, response_id in enumerate(responses.response_ids):
        rows.append(
            {
                "response_id": response_id,
                "model": names[int(responses.model_index[i])],
                "sample": int(responses.sample[i]),
                "x": json_number(projection.coordinates[i, 0]),
                "y": json_number(projection.coordinates[i, 1]),
                "typicality": json_number(measured.typicality[i]),
                "text": responses.texts[i],
            }
        )
    intra = dict(zip(measured.intra_models.tolist(), measured.intra_values.tolist(), strict=True))
    models = []
    for position, model in enumerate(measured.models.tolist()):
        own = responses.model_index == model
        models.append(
            {
                "model": names[model],
                "responses": int(measured.counts[position]),
                "intra_model": json_number(intra.get(model)),
                "typicality_mean": json_number(
                    float(np.nanmean(measured.typicality[own]))
                    if np.any(~np.isnan(measured.typicality[own]))
                    else None
                ),
            }
        )
    upper = np.triu_indices(measured.models.size, k=1)
    pairs = measured.pair_means[upper]
    pairs = pairs[~np.isnan(pairs)]
    return QueryDetail(
        query=query,
        basis=basis,
        explained=[json_number(v) for v in projection.explained],
        responses=rows,
        models=models,
        inter_model_mean=json_number(pairs.mean()) if pairs.size else None,
        unique_models=[json_number(v) for v in measured.top_n],
    )


def projection_payload(corpus: Corpus, detail: QueryDetail) -> dict:
    """The drill-down as JSON (the API's and the page's download)."""
    query = detail.query
    return {
        "corpus": corpus.name,
        "query_id": query.query_id,
        "query": query.text,
        "category": query.category,
        "subcategory": query.subcategory,
        "basis": detail.basis,
        "explained_variance": detail.explained,
        "inter_model_mean": detail.inter_model_mean,
        "models": detail.models,
        "unique_models": detail.unique_models,
        "responses": detail.responses,
    }
