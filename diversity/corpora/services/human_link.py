"""Typicality against human judgments, the last section of a corpus's report.

The batches linked are those recorded in ``CorpusSelection`` for the corpus, and the one
absolute batch named by ``human_batch``, if any. A batch item belongs to a corpus response
when its metadata names the corpus and the response (``corpus`` and ``corpus_response_id``,
as batches made from a selection write them), or else when its response's id equals a
corpus ``response_id``. Per batch, Spearman's rho with a percentile bootstrap interval over
items (``analysis.stats.bootstrap``) between the response's typicality and the item's mean
rating, and between typicality and the item's label entropy (``analysis.stats.per_item``),
pooled and per category of the corpus query.
"""

import numpy as np

from analysis.loading import load_batch
from analysis.stats.bootstrap import correlate_sources_subsets
from analysis.stats.correlation import CorrelationResult
from analysis.stats.per_item import count_matrix, item_summary
from annotation.kinds import kinds_reading
from annotation.models import Batch, Item
from diversity.corpora.models import Corpus, CorpusResponse, CorpusSelection
from diversity.homogeneity.report import json_number

# the kinds whose batches give the human side name this analysis in ``analyses``
HUMAN_ANALYSIS = "corpus_typicality"
CORRELATION_ALL = "all"
# ids per IN (...) lookup: below every database's limit on a statement's parameters
LOOKUP_CHUNK = 5000


def linked_batches(corpus: Corpus, human_batch: Batch | None = None) -> list[Batch]:
    """The absolute batches made from the corpus (``CorpusSelection``), then ``human_batch``."""
    batches = list(
        Batch.objects.filter(
            pk__in=CorpusSelection.objects.filter(corpus=corpus).values("batch"),
            kind__in=kinds_reading(HUMAN_ANALYSIS),
        ).order_by("slug")
    )
    if human_batch is not None and all(b.pk != human_batch.pk for b in batches):
        batches.append(human_batch)
    return batches


def item_rows(corpus: Corpus, batch: Batch, item_pks: np.ndarray) -> np.ndarray:
    """The corpus ``row_index`` of each item's response (-1 where it is not the corpus's).

    An item names its corpus response in its metadata (``corpus`` = the corpus's name and
    ``corpus_response_id``), or else through its response's id.
    """
    wanted_of: dict[int, str | None] = {}
    items = Item.objects.filter(batch=batch).values_list("pk", "metadata", "response__response_id")
    for item_pk, metadata, response_id in items.iterator(chunk_size=5000):
        metadata = metadata if isinstance(metadata, dict) else {}
        if metadata.get("corpus") == corpus.name and metadata.get("corpus_response_id"):
            wanted_of[item_pk] = str(metadata["corpus_response_id"])
        else:
            wanted_of[item_pk] = response_id
    wanted = [wanted_of.get(pk) for pk in item_pks.tolist()]
    row_of: dict[str, int] = {}
    distinct = sorted({rid for rid in wanted if rid is not None})
    for start in range(0, len(distinct), LOOKUP_CHUNK):
        row_of.update(
            CorpusResponse.objects.filter(
                corpus=corpus, response_id__in=distinct[start : start + LOOKUP_CHUNK]
            ).values_list("response_id", "row_index")
        )
    return np.array([row_of.get(rid, -1) for rid in wanted], dtype=np.int64)


def _correlation(result: CorrelationResult) -> dict:
    return {
        "rho": json_number(result.r),
        "p": json_number(result.p),
        "ci95": [json_number(v) for v in result.ci95] if result.ci95 is not None else None,
        "n": result.n,
        "reason": result.reason,
    }


def _query_categories(corpus: Corpus, rows: np.ndarray) -> list[str]:
    category_of: dict[int, str] = {}
    distinct = sorted(set(rows.tolist()))
    for start in range(0, len(distinct), LOOKUP_CHUNK):
        category_of.update(
            CorpusResponse.objects.filter(
                corpus=corpus, row_index__in=distinct[start : start + LOOKUP_CHUNK]
            ).values_list("row_index", "query__category")
        )
    return [category_of.get(int(row), "") for row in rows]


def _batch_link(
    corpus: Corpus,
    batch: Batch,
    typicality: np.ndarray,
    *,
    bootstrap: int,
    seed: int,
    min_items: int,
) -> dict:
    arrays = load_batch(batch)
    counts = count_matrix(arrays.item_index, arrays.value, arrays.label_set, arrays.n_items)
    per_item = item_summary(counts, arrays.label_set)
    rows = item_rows(corpus, batch, arrays.item_pks)
    matched = rows >= 0
    rows, mean, entropy = (
        rows[matched],
        per_item["mean"][matched],
        per_item["entropy_bits"][matched],
    )
    item_typicality = typicality[rows] if rows.size else np.zeros(0)
    categories = np.array(_query_categories(corpus, rows), dtype=object)
    rated = ~np.isnan(mean)
    masks = {CORRELATION_ALL: np.ones(rows.size, dtype=bool)}
    for category in sorted({c for c in categories.tolist() if c}):
        masks[category] = categories == category
    with_rating = correlate_sources_subsets([item_typicality], mean, masks, bootstrap, seed)[0]
    with_entropy = correlate_sources_subsets([item_typicality], entropy, masks, bootstrap, seed)[0]

    def section(name: str) -> dict:
        mask = masks[name]
        usable = mask & rated & ~np.isnan(item_typicality)
        return {
            "items": int(mask.sum()),
            "rated_items": int((mask & rated).sum()),
            "small": bool(usable.sum() < min_items),
            "typicality_vs_mean_rating": _correlation(with_rating[name].spearman),
            "typicality_vs_entropy": _correlation(with_entropy[name].spearman),
        }

    return {
        "batch": batch.slug,
        "batch_items": arrays.n_items,
        **section(CORRELATION_ALL),
        "by_category": {name: section(name) for name in masks if name != CORRELATION_ALL},
    }


def human_link(
    corpus: Corpus,
    typicality: np.ndarray,
    *,
    bootstrap: int,
    seed: int,
    human_batch: Batch | None = None,
    min_items: int = 10,
) -> dict:
    """Typicality against the human judgments of each linked batch (see the module doc)."""
    return {
        "statistic": "spearman",
        "ci_level": 0.95,
        "bootstrap": {"draws": bootstrap, "seed": seed},
        "min_items": min_items,
        "batches": [
            _batch_link(
                corpus, batch, typicality, bootstrap=bootstrap, seed=seed, min_items=min_items
            )
            for batch in linked_batches(corpus, human_batch)
        ],
    }
