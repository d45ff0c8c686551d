"""Batches made from a selection of a corpus, and the data-card lines that say how.

``make_batch`` creates a draft **absolute** batch (query, response → rating 1–5) whose items
are responses of the corpus chosen by one of two rules, then records the rule in a
``CorpusSelection`` (in the same transaction: a refused selection leaves no batch):

* ``typicality``: for each query, the ``k`` responses of highest and the ``k`` of lowest
  typicality (mean cosine similarity to the other models' responses to the same query)
  in the corpus's newest finished analysis; responses whose typicality is undefined (no
  other model answered) are left out, ties go by response id, and a query with at most
  ``2k`` defined responses gives them all, each once.
* ``random``: for each query and each model, ``r`` of that model's responses drawn without
  replacement (all of them if it has at most ``r``) by ``numpy.random.default_rng(seed)``,
  queries in file order, models by name, responses by sample number — so the same corpus,
  ``r`` and seed give the same items.

Optionally only the queries of some ``categories``. A selection of more than
``settings.SELECTION_MAX_ITEMS`` responses is refused before any text is read (its size is
counted from the ids alone). The items are written, as they are chosen, to a temporary JSONL
file that ``annotation.services.importing.import_items`` then imports, so every rule of an
item import holds and no second copy of the texts is built in memory. Item, query and
response ids become ``<corpus>/<id>`` (ids are project-wide in batches; past 200 characters
the id is replaced by its hash); each item's metadata keeps the corpus's own ids, the model,
the sample, the typicality and which end of the ranking chose it, so the corpus analysis can
link the item's ratings back (``services.human_link.item_rows``).
"""

import hashlib
import json
import math
import tempfile
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from typing import IO

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count

from annotation.models import Batch
from annotation.services.batches import create_batch
from annotation.services.importing import import_items
from core.audit import Actor
from core.errors import InvalidInput
from core.parameters import integer_parameter
from diversity.corpora.loading import CorpusStructure, corpus_structure, pool_responses
from diversity.corpora.models import (
    Corpus,
    CorpusQuery,
    CorpusResponse,
    CorpusSelection,
    SelectionRule,
)
from diversity.corpora.services.analyses import latest_job, typicality_of

__all__ = [
    "MAX_PER_QUERY",
    "SelectedItem",
    "make_batch",
    "select_items",
    "selection_card_lines",
    "selection_params",
    "selection_size",
]

MAX_PER_QUERY = 1000
ID_MAX_CHARS = 200
ENDS = {"most": "most typical", "least": "least typical", "random": "random"}


@dataclass(frozen=True)
class SelectedItem:
    query_id: str
    query_text: str
    category: str
    subcategory: str
    response_id: str
    text: str
    model: str
    sample: int
    typicality: float | None
    chosen_as: str


def selection_params(
    corpus: Corpus, rule, per_query, seed=None, categories=None
) -> tuple[str, int, int | None, list[str]]:
    """Checked ``(rule, per_query, seed, categories)``."""
    if rule not in SelectionRule.values:
        raise InvalidInput(
            "rule", f"must be one of {', '.join(SelectionRule.values)}, got {rule!r}"
        )
    per_query = integer_parameter("per_query", per_query, 1, MAX_PER_QUERY)
    if rule == SelectionRule.RANDOM:
        seed = integer_parameter("seed", 0 if seed in (None, "") else seed, 0, 2**63 - 1)
    else:
        seed = None
    if categories in (None, ""):
        categories = []
    if isinstance(categories, str):
        categories = [part.strip() for part in categories.split(",") if part.strip()]
    if not isinstance(categories, list | tuple) or not all(isinstance(c, str) for c in categories):
        raise InvalidInput("categories", "must be a list of category names")
    categories = sorted({c.strip() for c in categories if c.strip()})
    known = set(
        CorpusQuery.objects.filter(corpus=corpus).values_list("category", flat=True).distinct()
    )
    unknown = [c for c in categories if c not in known]
    if unknown:
        raise InvalidInput(
            "categories", f"corpus {corpus.name!r} has no category {', '.join(map(repr, unknown))}"
        )
    return rule, per_query, seed, categories


def _typicality_source(corpus: Corpus, rule: str) -> tuple[object, np.ndarray | None]:
    """The analysis job and its typicality array the rule needs (``None, None`` for random)."""
    if rule != SelectionRule.TYPICALITY:
        return None, None
    job = latest_job(corpus)
    typicality = typicality_of(job) if job is not None else None
    if typicality is None:
        raise InvalidInput(
            "rule",
            f"the typicality rule needs a finished analysis of corpus {corpus.name!r}; "
            "run one first",
        )
    return job, typicality


def selection_size(
    corpus: Corpus,
    rule: str,
    per_query: int,
    categories: list[str] | None = None,
    typicality: np.ndarray | None = None,
) -> int:
    """How many responses the rule chooses, counted from ids (and typicality) without
    reading a text.

    ``random``: the sum over (query, model) of ``min(r, responses)``; ``typicality``: the
    sum over queries of ``min(2k, responses of defined typicality)``.
    """
    responses = CorpusResponse.objects.filter(corpus=corpus)
    if categories:
        responses = responses.filter(query__category__in=list(categories))
    if rule == SelectionRule.RANDOM:
        sizes = responses.values("query", "model").annotate(n=Count("pk")).values_list("n")
        return sum(min(n, per_query) for (n,) in sizes)
    defined: Counter[int] = Counter()
    for query_pk, row in responses.values_list("query", "row_index").iterator(chunk_size=20_000):
        if not math.isnan(typicality[row]):
            defined[query_pk] += 1
    return sum(min(n, 2 * per_query) for n in defined.values())


def _check_size(
    corpus: Corpus, rule: str, per_query: int, categories: list[str], typicality
) -> None:
    """Refuse a selection of more than ``SELECTION_MAX_ITEMS`` responses, before any work."""
    limit = settings.SELECTION_MAX_ITEMS
    if rule == SelectionRule.TYPICALITY:
        # Each query gives at most 2k: most selections are under the limit without a count.
        queries = CorpusQuery.objects.filter(corpus=corpus)
        if categories:
            queries = queries.filter(category__in=categories)
        bound = sum(min(n, 2 * per_query) for n in queries.values_list("n_responses", flat=True))
        if bound <= limit:
            return
    size = selection_size(corpus, rule, per_query, categories, typicality)
    if size > limit:
        raise InvalidInput(
            "per_query",
            f"the selection has {size:,} responses, more than the limit of {limit:,} "
            "(SELECTION_MAX_ITEMS): choose a smaller per_query or fewer categories",
        )


def _chosen(
    structure: CorpusStructure,
    corpus: Corpus,
    rule: str,
    per_query: int,
    seed: int | None,
    typicality: np.ndarray | None,
) -> Iterator[SelectedItem]:
    """The responses the rule chooses, query by query (one fetched chunk in memory)."""
    rng = np.random.default_rng(seed) if rule == SelectionRule.RANDOM else None
    for responses in pool_responses(corpus, structure):
        query = responses.query
        if rule == SelectionRule.TYPICALITY:
            values = np.asarray(typicality[responses.row_index], dtype=np.float64)
            defined = np.flatnonzero(~np.isnan(values))
            ids = [responses.response_ids[i] for i in defined]
            order = sorted(range(defined.size), key=lambda j: (-values[defined[j]], ids[j]))
            most = order[:per_query]
            taken = set(most)
            lowest = sorted(range(defined.size), key=lambda j: (values[defined[j]], ids[j]))
            least = [j for j in lowest if j not in taken][:per_query]
            picks = [(int(defined[j]), "most") for j in most]
            picks += [(int(defined[j]), "least") for j in least]
        else:
            picks = []
            for model in np.unique(responses.model_index):
                own = np.flatnonzero(responses.model_index == model)  # by sample already
                if own.size > per_query:
                    own = np.sort(rng.choice(own, size=per_query, replace=False))
                picks += [(int(i), "random") for i in own]
        for i, end in picks:
            value = None
            if typicality is not None:
                value = float(typicality[responses.row_index[i]])
            yield SelectedItem(
                query_id=query.query_id,
                query_text=query.text,
                category=query.category,
                subcategory=query.subcategory,
                response_id=responses.response_ids[i],
                text=responses.texts[i],
                model=structure.model_names[int(responses.model_index[i])],
                sample=int(responses.sample[i]),
                typicality=value,
                chosen_as=ENDS[end],
            )


def select_items(
    corpus: Corpus,
    rule: str,
    per_query: int,
    seed: int | None = None,
    categories: list[str] | None = None,
) -> tuple[list[SelectedItem], object]:
    """The responses the rule chooses, query by query, and the analysis job it used."""
    structure = corpus_structure(corpus, categories or None)
    job, typicality = _typicality_source(corpus, rule)
    return list(_chosen(structure, corpus, rule, per_query, seed, typicality)), job


def _batch_id(corpus: Corpus, corpus_id: str) -> str:
    """``<corpus>/<id>``, or ``<corpus>/#<hash of id>`` when that would be too long."""
    wanted = f"{corpus.name}/{corpus_id}"
    if len(wanted) <= ID_MAX_CHARS:
        return wanted
    return f"{corpus.name}/#{hashlib.sha256(corpus_id.encode()).hexdigest()[:32]}"


def _item_line(corpus: Corpus, item: SelectedItem) -> bytes:
    row = {
        "item_id": _batch_id(corpus, item.response_id),
        "query_id": _batch_id(corpus, item.query_id),
        "query": item.query_text,
        "response_id": _batch_id(corpus, item.response_id),
        "response": item.text,
        "model": item.model,
        "corpus": corpus.name,
        "corpus_query_id": item.query_id,
        "corpus_response_id": item.response_id,
        "sample": item.sample,
        "chosen_as": item.chosen_as,
    }
    if item.category:
        row["category"] = item.category
    if item.subcategory:
        row["subcategory"] = item.subcategory
    if item.typicality is not None:
        row["typicality"] = item.typicality
    return json.dumps(row, ensure_ascii=False).encode("utf-8") + b"\n"


def _write_items(corpus: Corpus, items: Iterator[SelectedItem], file: IO[bytes]) -> dict:
    """Write ``items`` to ``file`` as JSONL, one at a time; the selection's counts."""
    n_items = 0
    queries: set[str] = set()
    models: set[str] = set()
    ends: Counter[str] = Counter()
    for item in items:
        file.write(_item_line(corpus, item))
        n_items += 1
        queries.add(item.query_id)
        models.add(item.model)
        ends[item.chosen_as] += 1
    return {
        "items": n_items,
        "queries": len(queries),
        "models": len(models),
        **{end.replace(" ", "_"): ends[end] for end in ENDS.values() if ends[end]},
    }


def make_batch(
    corpus: Corpus,
    *,
    slug: str,
    rule: str,
    per_query: int,
    seed: int | None = None,
    categories: list[str] | None = None,
    title: str = "",
    annotations_per_item: int | None = None,
    actor: Actor | None = None,
) -> tuple[Batch, CorpusSelection]:
    """A draft absolute batch of the selection, and its recorded ``CorpusSelection``.

    Refused (``InvalidInput``, nothing made) when the selection is empty or has more than
    ``settings.SELECTION_MAX_ITEMS`` responses.
    """
    rule, per_query, seed, categories = selection_params(corpus, rule, per_query, seed, categories)
    job, typicality = _typicality_source(corpus, rule)
    _check_size(corpus, rule, per_query, categories, typicality)
    structure = corpus_structure(corpus, categories or None)
    design = {} if annotations_per_item is None else {"annotations_per_item": annotations_per_item}
    with tempfile.TemporaryFile(prefix="selection-", suffix=".jsonl") as items_file:
        chosen = _chosen(structure, corpus, rule, per_query, seed, typicality)
        counts = _write_items(corpus, chosen, items_file)
        if not counts["items"]:
            raise InvalidInput("rule", "the selection is empty: no response matches")
        items_file.seek(0)
        with transaction.atomic():
            batch = create_batch(
                slug=slug,
                kind="absolute",  # the items file _write_items writes is absolute's
                title=title or f"{corpus.name}: {SelectionRule(rule).label}",
                actor=actor,
                **design,
            )
            import_items(batch, items_file, filename=f"{slug}.jsonl", actor=actor)
            selection = CorpusSelection.objects.create(
                corpus=corpus,
                batch=batch,
                rule=rule,
                per_query=per_query,
                seed=seed,
                categories=categories,
                analysis_job=job,
                counts=counts,
                created_by=actor.user if actor else None,
            )
    return batch, selection


def _rule_text(selection: CorpusSelection) -> str:
    k = selection.per_query
    if selection.rule == SelectionRule.TYPICALITY:
        job = selection.analysis_job
        basis = ((job.result or {}).get("basis") if job is not None else None) or "unknown"
        source = (
            f"analysis `{job.pk}` (finished {job.finished_at:%Y-%m-%d %H:%M} UTC, basis {basis})"
            if job is not None and job.finished_at
            else "an analysis since deleted"
        )
        return (
            f"typicality — for each query, the {k} most and the {k} least typical responses "
            "(typicality = mean cosine similarity to the other models' responses to the same "
            f"query; undefined ones left out, ties by response id), from {source}"
        )
    return (
        f"random — for each query and model, {k} of its responses drawn without replacement "
        f"(all if it has at most {k}), numpy `default_rng({selection.seed})`, queries in file "
        "order, models by name"
    )


def selection_card_lines(batch: Batch) -> list[str]:
    """The data-card section saying how ``batch`` was selected from a corpus (none if it
    was not)."""
    selection = (
        CorpusSelection.objects.select_related("corpus", "analysis_job")
        .filter(batch_id=batch.pk)
        .first()
    )
    if selection is None:
        return []
    corpus = selection.corpus
    counts = selection.counts or {}
    categories = ", ".join(f"`{c}`" for c in selection.categories) or "all"
    lines = [
        "## Selection from a corpus",
        "",
        f"- Corpus: `{corpus.name}` ({corpus.n_queries} queries, {corpus.n_models} models, "
        f"{corpus.n_responses} responses)",
        f"- Rule: {_rule_text(selection)}",
        f"- Categories: {categories}",
        f"- Selected: {counts.get('items', 0)} responses of {counts.get('queries', 0)} queries "
        f"from {counts.get('models', 0)} models",
        "- Item metadata: `corpus`, `corpus_query_id`, `corpus_response_id`, `sample`, "
        "`chosen_as`, `typicality`",
        f"- Made {selection.created_at:%Y-%m-%d %H:%M} UTC"
        + (f" by {selection.created_by.get_username()}" if selection.created_by else ""),
        "",
    ]
    return lines
