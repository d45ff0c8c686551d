"""The database (and the embedding file) → the pure homogeneity code, one query's pool at a
time.

``corpus_structure`` reads the corpus's queries and models once; ``corpus_pools`` then
yields one ``diversity.homogeneity.pipeline.QueryPool`` per query, fetching the responses of
a few hundred queries per statement (``POOL_FETCH_ROWS`` responses at most), so memory holds
one such chunk of texts and never the corpus. Within a pool the responses are ordered by
model name, then sample number — the order the top-N ties follow, whatever the file's order.
The pool's vectors are its rows of the memory-mapped embedding array, or, for the lexical
basis, the TF-IDF vectors of its texts.
"""

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from itertools import groupby

import numpy as np

from diversity.corpora.models import Corpus, CorpusModel, CorpusQuery, CorpusResponse
from diversity.homogeneity.lexical import tfidf_vectors
from diversity.homogeneity.pipeline import QueryPool

__all__ = [
    "POOL_FETCH_ROWS",
    "CorpusStructure",
    "PoolResponses",
    "QueryInfo",
    "corpus_pools",
    "corpus_structure",
    "pool_responses",
    "query_structure",
]

POOL_FETCH_ROWS = 20_000
POOL_FETCH_QUERIES = 500


@dataclass(frozen=True)
class QueryInfo:
    pk: int
    query_id: str
    text: str
    category: str
    subcategory: str
    n_responses: int


@dataclass(frozen=True)
class CorpusStructure:
    """The corpus's models (sorted by name; a model's index is its position here) and its
    queries in file order."""

    model_names: list[str]
    model_index_of_pk: dict[int, int]
    queries: list[QueryInfo]

    def query(self, query_id: str) -> QueryInfo | None:
        return next((q for q in self.queries if q.query_id == query_id), None)


def corpus_structure(
    corpus: Corpus,
    categories: Sequence[str] | None = None,
    positions: tuple[int, int] | None = None,
) -> CorpusStructure:
    """Models and queries (only those of ``categories`` when given, and only those whose
    ``position`` is in ``[first, stop)`` with ``positions``: a part of an analysis)."""
    queries = CorpusQuery.objects.filter(corpus=corpus).order_by("position")
    if categories:
        queries = queries.filter(category__in=list(categories))
    if positions is not None:
        queries = queries.filter(position__gte=positions[0], position__lt=positions[1])
    return _structure(corpus, queries)


def query_structure(corpus: Corpus, query_id: str) -> CorpusStructure | None:
    """Models and the one query ``query_id`` (None if the corpus has no such query): what
    a query's drill-down needs, without reading the other queries."""
    structure = _structure(corpus, CorpusQuery.objects.filter(corpus=corpus, query_id=query_id))
    return structure if structure.queries else None


def _structure(corpus: Corpus, queries) -> CorpusStructure:
    models = sorted(
        CorpusModel.objects.filter(corpus=corpus).values_list("pk", "name"), key=lambda m: m[1]
    )
    return CorpusStructure(
        model_names=[name for _, name in models],
        model_index_of_pk={pk: index for index, (pk, _) in enumerate(models)},
        queries=[
            QueryInfo(*row)
            for row in queries.values_list(
                "pk", "query_id", "text", "category", "subcategory", "n_responses"
            )
        ],
    )


@dataclass(frozen=True)
class PoolResponses:
    """One query's responses in pool order (model name, then sample)."""

    query: QueryInfo
    model_index: np.ndarray
    sample: np.ndarray
    row_index: np.ndarray
    response_ids: list[str]
    texts: list[str]


def _chunks(queries: Sequence[QueryInfo]) -> Iterator[list[QueryInfo]]:
    chunk: list[QueryInfo] = []
    rows = 0
    for query in queries:
        if chunk and (
            rows + query.n_responses > POOL_FETCH_ROWS or len(chunk) >= POOL_FETCH_QUERIES
        ):
            yield chunk
            chunk, rows = [], 0
        chunk.append(query)
        rows += query.n_responses
    if chunk:
        yield chunk


def pool_responses(
    corpus: Corpus, structure: CorpusStructure, queries: Sequence[QueryInfo] | None = None
) -> Iterator[PoolResponses]:
    """Each query's responses (``queries``, default all of the structure's), in its order."""
    for chunk in _chunks(structure.queries if queries is None else queries):
        by_pk = {query.pk: query for query in chunk}
        rows = (
            CorpusResponse.objects.filter(corpus=corpus, query__in=list(by_pk))
            .order_by("query", "model", "sample")
            .values_list("query", "model", "sample", "row_index", "response_id", "text")
        )
        fetched = {}
        for query_pk, group in groupby(rows.iterator(chunk_size=5000), key=lambda row: row[0]):
            fetched[query_pk] = list(group)
        for query in chunk:
            group = fetched.get(query.pk, [])
            if not group:
                continue
            model_index = np.array(
                [structure.model_index_of_pk[row[1]] for row in group], dtype=np.int64
            )
            sample = np.array([row[2] for row in group], dtype=np.int64)
            order = np.lexsort((sample, model_index))
            yield PoolResponses(
                query=query,
                model_index=model_index[order],
                sample=sample[order],
                row_index=np.array([group[i][3] for i in order], dtype=np.int64),
                response_ids=[group[i][4] for i in order],
                texts=[group[i][5] for i in order],
            )


def pool_vectors(responses: PoolResponses, embeddings: np.ndarray | None):
    """The pool's vectors: its embedding rows (float32), or its TF-IDF rows (CSR)."""
    if embeddings is None:
        return tfidf_vectors(responses.texts, dense=False)
    return np.asarray(embeddings[responses.row_index], dtype=np.float32)


def corpus_pools(
    corpus: Corpus,
    structure: CorpusStructure,
    embeddings: np.ndarray | None,
    rows_of: dict[str, np.ndarray] | None = None,
) -> Iterator[QueryPool]:
    """One ``QueryPool`` per query (its texts included, for the lexical figures).

    ``embeddings`` None: the TF-IDF basis. ``rows_of``, if given, receives each query's
    ``row_index`` array in pool order (to place per-response results such as typicality).
    """
    for responses in pool_responses(corpus, structure):
        query = responses.query
        if rows_of is not None:
            rows_of[query.query_id] = responses.row_index
        yield QueryPool(
            query_id=query.query_id,
            embeddings=pool_vectors(responses, embeddings),
            model_index=responses.model_index,
            sample=responses.sample,
            category=query.category or None,
            texts=responses.texts,
        )
