"""The ``corpus_analysis`` job in parts, by query, that any number of Celery workers measure
in parallel (``core.jobs.chunks``; one after another in this process without a broker).

**Plan**: the corpus's queries in file order, cut into parts of whole queries of about
``part_responses`` responses each (at least ``MIN_PART_RESPONSES``, at most
``MAX_PART_RESPONSES``: about ``TARGET_PARTS`` parts for a pool of up to 640,000
responses, 130 for the study's 2.6 M). The parameters are checked once, here, and the
embedding file in use is pinned by name, so that every part and the report's
``embeddings`` facts are of the same file; a part that finds it replaced fails the job.

**Part**: measures its queries (``analyses.measure_queries``: a query's figures depend on
its own responses only) and stores them whole in a job file, ``<job>-part-00012.pickle``,
written under another name and renamed into place, so a part is there whole or not at all.
The files are the platform's own, in its own data folder, read only by its own workers.

**Assembly**: reads the parts in order and makes the report, the query table and the
typicality exactly as one process does (``analyses.assemble_run``: the summaries sort
queries by id, so the order of the parts could not change them anyway), writes the job's
three files and deletes the parts.
"""

import math
import pickle
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from django.conf import settings

from analysis.services.analyses import write_report
from core.errors import InvalidInput, NotFound, ServiceError
from core.files import output_path
from core.jobs.chunks import ChunkedWork, Plan, register_chunked_job_kind
from core.jobs.execution import JobProgress, job_files_dir
from core.models import Job
from diversity.corpora.access import can_analyse_corpora
from diversity.corpora.loading import corpus_structure
from diversity.corpora.models import Corpus, CorpusQuery
from diversity.corpora.services.analyses import (
    DEFAULT_DRAWS,
    DEFAULT_SEED,
    JOB_KIND,
    MeasuredQuery,
    analysis_params,
    assemble_run,
    file_names,
    human_batch_of,
    measure_queries,
    write_query_table,
    write_typicality,
)
from diversity.corpora.storage import corpus_dir, embedding_path
from diversity.homogeneity.pipeline import AnalysisSettings

MIN_PART_RESPONSES = 1_000
MAX_PART_RESPONSES = 20_000
TARGET_PARTS = 32


def part_responses(total: int) -> int:
    """About how many responses a part measures, for a corpus of ``total``
    (``CORPUS_ANALYSIS_PART_RESPONSES`` when set)."""
    if settings.CORPUS_ANALYSIS_PART_RESPONSES > 0:
        return settings.CORPUS_ANALYSIS_PART_RESPONSES
    return max(MIN_PART_RESPONSES, min(MAX_PART_RESPONSES, math.ceil(total / TARGET_PARTS)))


def query_parts(queries: list[tuple[int, int]]) -> list[list[int]]:
    """``(position, responses)`` of each query, in position order → ``[first, stop)``
    position ranges of whole queries, each closed once it holds ``part_responses``."""
    size = part_responses(sum(responses for _, responses in queries))
    parts: list[list[int]] = []
    first, rows = None, 0
    for position, responses in queries:
        first = position if first is None else first
        rows += responses
        if rows >= size:
            parts.append([first, position + 1])
            first, rows = None, 0
    if first is not None:
        parts.append([first, queries[-1][0] + 1])
    return parts


def _corpus(job: Job) -> Corpus:
    if job.subject is None:
        raise NotFound("corpus: the corpus of this analysis no longer exists")
    return job.subject


def _plan(job: Job) -> Plan:
    corpus = _corpus(job)
    params = job.params or {}
    checked = analysis_params(
        params.get("bootstrap", DEFAULT_DRAWS),
        params.get("seed", DEFAULT_SEED),
        params.get("lexical", False),
        params.get("human_batch"),
    )
    queries = list(
        CorpusQuery.objects.filter(corpus=corpus)
        .order_by("position")
        .values_list("position", "n_responses")
    )
    if not queries:
        raise InvalidInput("corpus", f"corpus {corpus.name!r} has no queries")
    path = None if checked["lexical"] else embedding_path(corpus)
    pinned = path.name if path is not None and path.exists() else ""
    return Plan(
        parts=[
            {"part": index, "positions": positions, "embedding_file": pinned}
            for index, positions in enumerate(query_parts(queries))
        ],
        final={
            **checked,
            "embedding_file": pinned,
            "embeddings": corpus.embedding_facts() if pinned else None,
        },
    )


def _settings(spec: dict) -> AnalysisSettings:
    return AnalysisSettings(bootstrap_draws=spec["bootstrap"], seed=spec["seed"])


def _part_path(job: Job, index: int) -> Path:
    return job_files_dir() / f"{job.pk}-part-{index:05d}.pickle"


def _pinned_embeddings(corpus: Corpus, name: str) -> np.ndarray | None:
    if not name:
        return None
    try:
        return np.load(corpus_dir(corpus) / name, mmap_mode="r")
    except FileNotFoundError:
        raise ServiceError(
            f"corpus: the embeddings of corpus {corpus.name!r} were replaced while this "
            "analysis ran; start it again"
        ) from None


def _measure_part(job: Job, spec: dict) -> None:
    corpus = _corpus(job)
    first, stop = spec["positions"]
    structure = corpus_structure(corpus, positions=(first, stop))
    embeddings = _pinned_embeddings(corpus, spec["embedding_file"])
    final = job.chunks.get(final=True).spec
    measured = measure_queries(corpus, structure, embeddings, _settings(final))
    # a temporary name of its own: a part taken again (its first worker thought lost)
    # may be written twice at once
    with output_path(_part_path(job, spec["part"])) as partial, open(partial, "wb") as stream:
        pickle.dump(measured, stream, protocol=pickle.HIGHEST_PROTOCOL)


def _read_parts(job: Job, parts: int) -> Iterator[MeasuredQuery]:
    for index in range(parts):
        with open(_part_path(job, index), "rb") as stream:
            yield from pickle.load(stream)  # noqa: S301  (written by this platform's workers)


def _assemble(job: Job, final: dict, progress: JobProgress) -> tuple[dict, str]:
    corpus = _corpus(job)
    parts = job.chunks.filter(final=False).count()
    run = assemble_run(
        corpus,
        corpus_structure(corpus),
        _read_parts(job, parts),
        embedding_facts=final["embeddings"],
        settings=_settings(final),
        human_batch=human_batch_of(final["human_batch"]),
    )
    names = file_names(job, corpus)
    folder = job_files_dir()
    write_query_table(run.query_rows, folder / names["queries"])
    write_typicality(run.typicality, folder / names["typicality"])
    write_report(run.report, folder / names["report"])
    for index in range(parts):
        _part_path(job, index).unlink(missing_ok=True)
    summary = {
        "n_queries": run.report["n_queries"],
        "n_models": run.report["n_models"],
        "n_responses": run.report["n_responses"],
        "basis": run.report["basis"],
        "parts": parts,
        "files": names,
    }
    return summary, names["report"]


ANALYSIS_PARTS = ChunkedWork(plan=_plan, run_part=_measure_part, assemble=_assemble)
register_chunked_job_kind(JOB_KIND, can_view=can_analyse_corpora, work=ANALYSIS_PARTS)
