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

Optionally only the queries of some ``categories``. The items are imported by
``annotation.services.importing.import_items`` (one JSONL document in memory), so every rule
of an item import holds. Item, query and response ids become ``<corpus>/<id>`` (ids are
project-wide in batches; past 200 characters the id is replaced by its hash); each
item's metadata keeps the corpus's own ids, the model, the sample, the typicality and
which end of the ranking chose it, so the corpus analysis can link the item's ratings back
(``services.analyses.item_rows``).
"""

import hashlib
import io
import json
from dataclasses import dataclass

import numpy as np
from django.db import transaction

from annotation.models import Batch, BatchKind
from annotation.services.batches import create_batch
from annotation.services.importing import import_items
from core.audit import Actor
from core.errors import InvalidInput
from diversity.corpora.loading import corpus_structure, pool_responses
from diversity.corpora.models import Corpus, CorpusQuery, CorpusSelection, SelectionRule
from diversity.corpora.services.analyses import latest_job, typicality_of

__all__ = [
    "MAX_PER_QUERY",
    "SelectedItem",
    "make_batch",
    "select_items",
    "selection_card_lines",
    "selection_params",
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


def _integer(field: str, value, low: int, high: int | None) -> int:
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(field, f"must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise InvalidInput(field, f"must be {bounds}, got {value}")
    return value


def selection_params(
    corpus: Corpus, rule, per_query, seed=None, categories=None
) -> tuple[str, int, int | None, list[str]]:
    """Checked ``(rule, per_query, seed, categories)``."""
    if rule not in SelectionRule.values:
        raise InvalidInput(
            "rule", f"must be one of {', '.join(SelectionRule.values)}, got {rule!r}"
        )
    per_query = _integer("per_query", per_query, 1, MAX_PER_QUERY)
    if rule == SelectionRule.RANDOM:
        seed = _integer("seed", 0 if seed in (None, "") else seed, 0, 2**63 - 1)
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


def select_items(
    corpus: Corpus,
    rule: str,
    per_query: int,
    seed: int | None = None,
    categories: list[str] | None = None,
) -> tuple[list[SelectedItem], object]:
    """The responses the rule chooses, query by query, and the analysis job it used."""
    structure = corpus_structure(corpus, categories or None)
    job = None
    typicality = None
    if rule == SelectionRule.TYPICALITY:
        job = latest_job(corpus)
        typicality = typicality_of(job) if job is not None else None
        if typicality is None:
            raise InvalidInput(
                "rule",
                f"the typicality rule needs a finished analysis of corpus {corpus.name!r}; "
                "run one first",
            )
    rng = np.random.default_rng(seed) if rule == SelectionRule.RANDOM else None
    chosen: list[SelectedItem] = []
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
            chosen.append(
                SelectedItem(
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
            )
    return chosen, job


def _batch_id(corpus: Corpus, corpus_id: str) -> str:
    """``<corpus>/<id>``, or ``<corpus>/#<hash of id>`` when that would be too long."""
    wanted = f"{corpus.name}/{corpus_id}"
    if len(wanted) <= ID_MAX_CHARS:
        return wanted
    return f"{corpus.name}/#{hashlib.sha256(corpus_id.encode()).hexdigest()[:32]}"


def _items_file(corpus: Corpus, items: list[SelectedItem]) -> io.BytesIO:
    lines = []
    for item in items:
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
        lines.append(json.dumps(row, ensure_ascii=False))
    return io.BytesIO(("\n".join(lines) + "\n").encode("utf-8"))


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
    """A draft absolute batch of the selection, and its recorded ``CorpusSelection``."""
    rule, per_query, seed, categories = selection_params(corpus, rule, per_query, seed, categories)
    items, job = select_items(corpus, rule, per_query, seed, categories)
    if not items:
        raise InvalidInput("rule", "the selection is empty: no response matches")
    design = {} if annotations_per_item is None else {"annotations_per_item": annotations_per_item}
    with transaction.atomic():
        batch = create_batch(
            slug=slug,
            kind=BatchKind.ABSOLUTE,
            title=title or f"{corpus.name}: {SelectionRule(rule).label}",
            actor=actor,
            **design,
        )
        import_items(batch, _items_file(corpus, items), filename=f"{slug}.jsonl", actor=actor)
        selection = CorpusSelection.objects.create(
            corpus=corpus,
            batch=batch,
            rule=rule,
            per_query=per_query,
            seed=seed,
            categories=categories,
            analysis_job=job,
            counts={
                "items": len(items),
                "queries": len({item.query_id for item in items}),
                "models": len({item.model for item in items}),
                **{
                    end.replace(" ", "_"): sum(item.chosen_as == end for item in items)
                    for end in ENDS.values()
                    if any(item.chosen_as == end for item in items)
                },
            },
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
