"""Analysing a corpus: the homogeneity report of ANALYSIS.md ("Response pools"), its tables,
and the link to the human judgments of batches made from the corpus.

``analyse`` streams the corpus's pools (``diversity.corpora.loading``) through the pure
``diversity.homogeneity.pipeline.analyse_corpus`` on the corpus's embeddings, or on each
pool's TF-IDF vectors when ``lexical`` is asked for or the corpus has no embeddings. It
returns the JSON report (``diversity.homogeneity.report.analysis_report`` plus the corpus,
its basis, a per-sub-category breakdown and the human-judgment link), one row per query,
and the typicality of every response (by ``row_index``).

The ``corpus_analysis`` job runs it and keeps three job files named after the job: the
report (``Job.result_path``), the per-query CSV table and the typicality ``.npy`` array
(their names in ``Job.result["files"]``). The corpus page, the API and ``manage.py
analyze_corpus`` all read the newest finished one (``latest_analysis``).

Link to human judgments (``human_link``): the batches recorded in ``CorpusSelection`` for
the corpus, and the one absolute batch named by ``human_batch``, if any. A batch item
belongs to a corpus response when its metadata names the corpus and the response
(``corpus`` and ``corpus_response_id``, as batches made from a selection write them), or
else when its response's id equals a corpus ``response_id``. Per batch, Spearman's rho with
a percentile bootstrap interval over items (``analysis.stats.bootstrap``) between the
response's typicality and the item's mean rating, and between typicality and the item's
label entropy (``analysis.stats.per_item``), pooled and per category of the corpus query.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from analysis.loading import load_batch
from analysis.services.analyses import write_report
from analysis.stats.bootstrap import correlate_sources_subsets
from analysis.stats.correlation import CorrelationResult
from analysis.stats.per_item import count_matrix, item_summary
from annotation.kinds import kinds_reading
from annotation.models import Batch, Item
from core import csv_files
from core.audit import Actor
from core.errors import InvalidInput, NotFound
from core.jobs.execution import JobProgress, job_files_dir, newest_report
from core.jobs.kinds import register_job_kind
from core.jobs.queue import run_now
from core.models import Job
from core.parameters import flag_parameter, integer_parameter
from diversity.corpora.access import can_analyse_corpora
from diversity.corpora.loading import CorpusStructure, corpus_pools, corpus_structure
from diversity.corpora.models import Corpus, CorpusResponse, CorpusSelection
from diversity.corpora.storage import open_embeddings
from diversity.homogeneity.pipeline import (
    AnalysisSettings,
    QueryMeasures,
    QueryPool,
    analyse_corpus,
    summarise_group,
)
from diversity.homogeneity.report import analysis_report as homogeneity_report
from diversity.homogeneity.report import group_report, json_number
from diversity.human_batches import human_batch_of as human_batch_of_kind

__all__ = [
    "BASIS_EMBEDDINGS",
    "BASIS_TFIDF",
    "DEFAULT_DRAWS",
    "DEFAULT_SEED",
    "HUMAN_ANALYSIS",
    "JOB_KIND",
    "MAX_DRAWS",
    "QUERY_COLUMNS",
    "CorpusRun",
    "analyse",
    "analyse_now",
    "analysis_params",
    "human_link",
    "job_file",
    "latest_analysis",
    "typicality_of",
]

JOB_KIND = "corpus_analysis"
DEFAULT_DRAWS = 1000
DEFAULT_SEED = 0
MAX_DRAWS = 100_000
# the kinds whose batches give the human side name this analysis in ``analyses``
HUMAN_ANALYSIS = "corpus_typicality"
BASIS_EMBEDDINGS = "embeddings"
BASIS_TFIDF = "tfidf"
# the points of each query's top-N curve the per-query table shows
QUERY_TABLE_N = (1, 5, 10, 50)
QUERY_COLUMNS = [
    "query_id",
    "category",
    "subcategory",
    "responses",
    "models",
    "intra_model_mean",
    "inter_model_mean",
    "typicality_mean",
    *[f"unique_models_n{n}" for n in QUERY_TABLE_N],
    "distinct_1",
    "distinct_2",
    "distinct_3",
    "duplicate_share",
]
CORRELATION_ALL = "all"
# ids per IN (...) lookup: below every database's limit on a statement's parameters
LOOKUP_CHUNK = 5000


# --------------------------------------------------------------------------- parameters


def human_batch_of(slug) -> Batch | None:
    """The absolute batch named ``slug`` (None for none); ``InvalidInput`` otherwise."""
    return human_batch_of_kind(slug, HUMAN_ANALYSIS, "a response's rating comes from an")


def analysis_params(
    bootstrap=DEFAULT_DRAWS, seed=DEFAULT_SEED, lexical=False, human_batch=None
) -> dict:
    """Checked job parameters: ``{"bootstrap", "seed", "lexical", "human_batch"}``."""
    batch = human_batch_of(human_batch)
    return {
        "bootstrap": integer_parameter("bootstrap", bootstrap, 1, MAX_DRAWS),
        "seed": integer_parameter("seed", seed, 0, 2**32 - 1),
        "lexical": flag_parameter("lexical", lexical),
        "human_batch": batch.slug if batch else None,
    }


# --------------------------------------------------------------------------- the analysis


@dataclass
class CorpusRun:
    """One analysis: the JSON report, one table row per query (``QUERY_COLUMNS``), and the
    typicality of every response by ``row_index`` (NaN where no other model answered)."""

    report: dict
    query_rows: list[list]
    typicality: np.ndarray


def _nanmean(values) -> float:
    values = np.asarray(values, dtype=np.float64).ravel()
    values = values[~np.isnan(values)]
    return float(values.mean()) if values.size else float("nan")


def _query_row(info, measured: QueryMeasures) -> list:
    upper = np.triu_indices(measured.models.size, k=1)
    curve = measured.top_n
    row = [
        info.query_id,
        info.category,
        info.subcategory,
        measured.n_responses,
        int(measured.models.size),
        json_number(_nanmean(measured.intra_values)),
        json_number(_nanmean(measured.pair_means[upper])),
        json_number(_nanmean(measured.typicality)),
    ]
    row += [json_number(curve[n - 1]) if n <= curve.size else None for n in QUERY_TABLE_N]
    lexical = measured.lexical
    if lexical is None:
        row += [None, None, None, None]
    else:
        row += [json_number(v) for v in lexical.distinct] + [json_number(lexical.duplicate_share)]
    return row


def _by_subcategory(
    measures: list[QueryMeasures],
    structure: CorpusStructure,
    settings: AnalysisSettings,
    names: Sequence[str],
) -> dict:
    """``{category: {subcategory: group report}}`` for the queries with a sub-category."""
    info = {query.query_id: query for query in structure.queries}
    groups: dict[tuple[str, str], list[QueryMeasures]] = {}
    for measured in measures:
        query = info[measured.query_id]
        if query.subcategory:
            groups.setdefault((query.category, query.subcategory), []).append(measured)
    out: dict[str, dict] = {}
    for (category, subcategory), group in sorted(groups.items()):
        out.setdefault(category, {})[subcategory] = group_report(
            summarise_group(group, settings), names
        )
    return out


def analyse(
    corpus: Corpus,
    *,
    bootstrap: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
    lexical: bool = False,
    human_batch: Batch | None = None,
    progress: Callable[..., None] | None = None,
) -> CorpusRun:
    """The corpus report (see the module doc); ``progress(done, total, message)`` counts
    the queries measured."""
    progress = progress or (lambda done, total=None, message="": None)
    structure = corpus_structure(corpus)
    if not structure.queries:
        raise InvalidInput("corpus", f"corpus {corpus.name!r} has no queries")
    embeddings = None if lexical else open_embeddings(corpus)
    basis = BASIS_TFIDF if embeddings is None else BASIS_EMBEDDINGS
    settings = AnalysisSettings(bootstrap_draws=bootstrap, seed=seed)
    info = {query.query_id: query for query in structure.queries}
    n_queries = len(structure.queries)
    typicality = np.full(corpus.n_responses, np.nan)
    rows_of: dict[str, np.ndarray] = {}
    query_rows: list[list] = []
    measures: list[QueryMeasures] = []
    progress(0, n_queries, "Measuring the queries")

    def on_query(pool: QueryPool, measured: QueryMeasures) -> None:
        rows = rows_of.pop(pool.query_id)
        typicality[rows] = measured.typicality
        query_rows.append(_query_row(info[pool.query_id], measured))
        measures.append(measured)
        progress(len(measures), n_queries, f"Measured {len(measures)} of {n_queries} queries")

    pools = corpus_pools(corpus, structure, embeddings, rows_of=rows_of)
    result = analyse_corpus(pools, structure.model_names, settings, on_query=on_query)
    report = {
        "corpus": corpus.name,
        "basis": basis,
        "embeddings": _embedding_facts(corpus) if basis == BASIS_EMBEDDINGS else None,
        **homogeneity_report(result),
    }
    report["settings"]["lexical"] = basis == BASIS_TFIDF
    report["n_queries"] = n_queries
    report["n_models"] = len(structure.model_names)
    report["n_responses"] = int(sum(query.n_responses for query in structure.queries))
    report["by_subcategory"] = _by_subcategory(measures, structure, settings, structure.model_names)
    report["human_judgments"] = human_link(
        corpus,
        typicality,
        bootstrap=bootstrap,
        seed=seed,
        human_batch=human_batch,
        min_items=settings.min_group_queries,
    )
    return CorpusRun(report=report, query_rows=query_rows, typicality=typicality)


def _embedding_facts(corpus: Corpus) -> dict:
    return {
        "source": corpus.embedding_source,
        "origin": corpus.embedding_origin,
        "dimension": corpus.embedding_dimension,
        "dtype": corpus.embedding_dtype,
        "sha256": corpus.embedding_sha256,
    }


# --------------------------------------------------------------------------- human judgments


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
    bootstrap: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
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


# --------------------------------------------------------------------------- the job


def _file_names(job: Job, corpus: Corpus) -> dict[str, str]:
    stem = f"{job.pk}-corpus-{corpus.name}"
    return {
        "report": f"{stem}-report.json",
        "queries": f"{stem}-queries.csv",
        "typicality": f"{stem}-typicality.npy",
    }


def write_query_table(rows: Sequence[list], path: Path) -> None:
    partial = path.with_name(path.name + ".partial")
    with open(partial, "w", encoding="utf-8", newline="") as stream:
        csv_files.write_table(stream, QUERY_COLUMNS, rows)
    partial.replace(path)


def _write_typicality(values: np.ndarray, path: Path) -> None:
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as stream:
        np.save(stream, values)
    partial.replace(path)


@register_job_kind(JOB_KIND, can_view=can_analyse_corpora)
def run_corpus_analysis(job: Job, progress: JobProgress) -> tuple[dict, str]:
    corpus = job.subject
    if corpus is None:
        raise NotFound("corpus: the corpus of this analysis no longer exists")
    params = job.params or {}
    checked = analysis_params(
        params.get("bootstrap", DEFAULT_DRAWS),
        params.get("seed", DEFAULT_SEED),
        params.get("lexical", False),
        params.get("human_batch"),
    )
    run = analyse(
        corpus,
        bootstrap=checked["bootstrap"],
        seed=checked["seed"],
        lexical=checked["lexical"],
        human_batch=human_batch_of(checked["human_batch"]),
        progress=progress,
    )
    names = _file_names(job, corpus)
    folder = job_files_dir()
    write_query_table(run.query_rows, folder / names["queries"])
    _write_typicality(run.typicality, folder / names["typicality"])
    write_report(run.report, folder / names["report"])
    summary = {
        "n_queries": run.report["n_queries"],
        "n_models": run.report["n_models"],
        "n_responses": run.report["n_responses"],
        "basis": run.report["basis"],
        "files": names,
    }
    return summary, names["report"]


def analyse_now(corpus: Corpus, params: dict, actor: Actor | None = None) -> Job:
    """Record a ``corpus_analysis`` job and run it in this process, whatever the queue
    (the command uses it, so its analysis appears on the page like one started there)."""
    return run_now(JOB_KIND, corpus, params, actor)


def latest_job(corpus: Corpus) -> Job | None:
    """The newest finished analysis of the corpus whose report file still exists."""
    jobs = corpus.jobs.filter(kind=JOB_KIND, state=Job.State.SUCCEEDED).order_by("-finished_at")
    for job in jobs[:5]:
        if job.result_path and (job_files_dir() / job.result_path).exists():
            return job
    return None


def latest_analysis(corpus: Corpus) -> tuple[Job, dict] | None:
    """The newest finished analysis of the corpus and its report, if any."""
    return newest_report(corpus, JOB_KIND)


def job_file(job: Job, key: str) -> Path | None:
    """One of an analysis job's files (``report``, ``queries``, ``typicality``), if kept."""
    name = ((job.result or {}).get("files") or {}).get(key)
    if not name:
        return None
    path = job_files_dir() / name
    return path if path.exists() else None


def typicality_of(job: Job) -> np.ndarray | None:
    """The analysis's typicality by ``row_index``, memory-mapped (None if not kept)."""
    path = job_file(job, "typicality")
    return np.load(path, mmap_mode="r") if path is not None else None
