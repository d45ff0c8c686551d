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

The link to human judgments is in ``human_link``.
"""

from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from annotation.models import Batch
from core import csv_files
from core.audit import Actor
from core.blas import single_blas_thread
from core.errors import InvalidInput
from core.jobs.execution import job_files_dir, newest_report
from core.jobs.queue import run_now
from core.models import Job
from core.parameters import flag_parameter, integer_parameter
from diversity.corpora.loading import CorpusStructure, corpus_pools, corpus_structure
from diversity.corpora.models import Corpus
from diversity.corpora.services.human_link import HUMAN_ANALYSIS, human_link
from diversity.corpora.storage import open_embeddings
from diversity.homogeneity.pipeline import (
    AnalysisSettings,
    QueryMeasures,
    measure_query,
    summarise_corpus,
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


@dataclass(frozen=True)
class MeasuredQuery:
    """One query's measures and the corpus ``row_index`` of each of its responses (in pool
    order, as ``measures.typicality``)."""

    rows: np.ndarray
    measures: QueryMeasures


def measure_queries(
    corpus: Corpus,
    structure: CorpusStructure,
    embeddings: np.ndarray | None,
    settings: AnalysisSettings,
    on_query: Callable[[int], None] | None = None,
) -> list[MeasuredQuery]:
    """Measure each query of ``structure`` (the whole corpus's, or a part's) on
    ``embeddings`` (None: each pool's TF-IDF vectors), in its order; ``on_query(done)``
    after each."""
    rows_of: dict[str, np.ndarray] = {}
    measured: list[MeasuredQuery] = []
    with single_blas_thread():
        for pool in corpus_pools(corpus, structure, embeddings, rows_of=rows_of):
            measures = measure_query(pool, settings.max_n, len(structure.model_names))
            measured.append(MeasuredQuery(rows_of.pop(pool.query_id), measures))
            if on_query is not None:
                on_query(len(measured))
    return measured


def assemble_run(
    corpus: Corpus,
    structure: CorpusStructure,
    measured: Iterable[MeasuredQuery],
    *,
    embedding_facts: dict | None,
    settings: AnalysisSettings,
    human_batch: Batch | None = None,
) -> CorpusRun:
    """The report, query table and typicality from every query's measures (in the corpus's
    query order; measured in one process or in parts on several): the summaries and the
    human-judgment link. ``embedding_facts`` None: the TF-IDF basis."""
    info = {query.query_id: query for query in structure.queries}
    typicality = np.full(corpus.n_responses, np.nan)
    query_rows: list[list] = []
    measures: list[QueryMeasures] = []
    for query in measured:
        typicality[query.rows] = query.measures.typicality
        query_rows.append(_query_row(info[query.measures.query_id], query.measures))
        measures.append(query.measures)
    result = summarise_corpus(measures, structure.model_names, settings)
    basis = BASIS_TFIDF if embedding_facts is None else BASIS_EMBEDDINGS
    report = {
        "corpus": corpus.name,
        "basis": basis,
        "embeddings": embedding_facts,
        **homogeneity_report(result),
    }
    report["settings"]["lexical"] = basis == BASIS_TFIDF
    report["n_queries"] = len(structure.queries)
    report["n_models"] = len(structure.model_names)
    report["n_responses"] = int(sum(query.n_responses for query in structure.queries))
    report["by_subcategory"] = _by_subcategory(measures, structure, settings, structure.model_names)
    report["human_judgments"] = human_link(
        corpus,
        typicality,
        bootstrap=settings.bootstrap_draws,
        seed=settings.seed,
        human_batch=human_batch,
        min_items=settings.min_group_queries,
    )
    return CorpusRun(report=report, query_rows=query_rows, typicality=typicality)


def analyse(
    corpus: Corpus,
    *,
    bootstrap: int = DEFAULT_DRAWS,
    seed: int = DEFAULT_SEED,
    lexical: bool = False,
    human_batch: Batch | None = None,
    progress: Callable[..., None] | None = None,
) -> CorpusRun:
    """The corpus report (see the module doc), in this process; ``progress(done, total,
    message)`` counts the queries measured. The ``corpus_analysis`` job gives the same,
    measured in parts (``analysis_parts``)."""
    progress = progress or (lambda done, total=None, message="": None)
    structure = corpus_structure(corpus)
    if not structure.queries:
        raise InvalidInput("corpus", f"corpus {corpus.name!r} has no queries")
    embeddings = None if lexical else open_embeddings(corpus)
    settings = AnalysisSettings(bootstrap_draws=bootstrap, seed=seed)
    n_queries = len(structure.queries)
    progress(0, n_queries, "Measuring the queries")
    measured = measure_queries(
        corpus,
        structure,
        embeddings,
        settings,
        lambda done: progress(done, n_queries, f"Measured {done} of {n_queries} queries"),
    )
    return assemble_run(
        corpus,
        structure,
        measured,
        embedding_facts=None if embeddings is None else corpus.embedding_facts(),
        settings=settings,
        human_batch=human_batch,
    )


# --------------------------------------------------------------------------- the job


def file_names(job: Job, corpus: Corpus) -> dict[str, str]:
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


def write_typicality(values: np.ndarray, path: Path) -> None:
    partial = path.with_name(path.name + ".partial")
    with open(partial, "wb") as stream:
        np.save(stream, values)
    partial.replace(path)


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
