"""Time the homogeneity analyses on a study-sized synthetic corpus.

1,000 queries x 25 models x 4 samples = 100,000 responses with 384-dimensional float32
embeddings built from a seed: per-query topic + per-model offset (models come in families
that share part of their offset) + per-(query, model) drift + noise, so the figures look
like a real pool (high intra-model, lower inter-model similarity, family clusters). Each
response also gets a synthetic text (40-80 words from the query's vocabulary with a
model-specific bias, 2 % exact repeats) for the lexical stage.

Stages (wall-clock, best of ``--repeat``): splitting the arrays into pools; similarity
(blocks, intra, inter, typicality); top-N for N = 1..50; lexical (distinct-1/2/3,
duplicates); then the whole :func:`analyse_corpus` (all of the above plus the pooled and
per-category summaries and the 1,000-draw bootstraps) and the JSON report. The budget
applies to the whole pipeline + report. Peak memory: the process' peak RSS
(``resource.getrusage``), and the tracemalloc peak of one extra, untimed pipeline run.
``--tfidf`` also times the TF-IDF fallback embedding over every query (not in the budget).

    .venv/bin/python bench/diversity.py [--queries 1000] [--models 25] [--samples 4]
        [--dim 384] [--repeat 3] [--tfidf] [--json PATH] [--md PATH]

``--workers`` instead imports that pool into PostgreSQL and times the ``corpus_analysis``
job on 1 and on 2 Celery worker processes, and in one process (``bench/workers.py``):

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_workers \
        .venv/bin/python bench/diversity.py --workers --redis redis://127.0.0.1:6379/15
        # bench/results/diversity-workers.{json,md}
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import resource
import sys
import time
import tracemalloc
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import pool_size  # noqa: E402
from diversity.homogeneity.lexical import pool_lexical_figures, tfidf_vectors  # noqa: E402
from diversity.homogeneity.neighbours import unique_models_curve  # noqa: E402
from diversity.homogeneity.pipeline import (  # noqa: E402
    AnalysisSettings,
    analyse_corpus,
    pools_from_arrays,
    single_blas_thread,
)
from diversity.homogeneity.report import analysis_report  # noqa: E402
from diversity.homogeneity.similarity import (  # noqa: E402
    inter_model_means,
    intra_model_means,
    model_blocks,
    typicality_from_blocks,
)

RESULTS = Path(__file__).resolve().parent / "results"
CATEGORIES = ["advice", "brainstorm", "code", "creative", "facts", "math", "opinion", "planning"]


def synthetic_corpus(n_queries: int, n_models: int, n_samples: int, dim: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    n = n_queries * n_models * n_samples
    query = np.repeat(np.arange(n_queries), n_models * n_samples)
    model = np.tile(np.repeat(np.arange(n_models), n_samples), n_queries)
    sample = np.tile(np.arange(n_samples), n_queries * n_models)
    topic = rng.normal(size=(n_queries, dim)).astype(np.float32)
    families = rng.normal(size=(5, dim)).astype(np.float32)
    offset = 0.5 * families[np.arange(n_models) % 5] + 0.4 * rng.normal(size=(n_models, dim))
    drift = rng.normal(size=(n_queries, n_models, dim)).astype(np.float32)
    embeddings = topic[query]
    embeddings += offset.astype(np.float32)[model]
    embeddings += 0.5 * drift[query, model]
    embeddings += 0.7 * rng.normal(size=(n, dim)).astype(np.float32)
    del drift

    vocabulary = np.array([f"w{i}" for i in range(5000)])
    query_words = rng.integers(0, 5000, size=(n_queries, 300))
    model_words = rng.integers(0, 300, size=(n_queries, n_models, 30))
    lengths = rng.integers(40, 81, size=n)
    picks = rng.integers(0, 300, size=(n, 80))
    biased = rng.uniform(size=(n, 80)) < 0.4
    favourite = np.take_along_axis(
        model_words[query, model], rng.integers(0, 30, size=(n, 80)), axis=1
    )
    which = np.where(biased, favourite, picks)
    words = vocabulary[query_words[query[:, None], which]]
    texts = [" ".join(row[:length]) for row, length in zip(words, lengths, strict=True)]
    for i in np.flatnonzero((sample > 0) & (rng.uniform(size=n) < 0.02)):
        texts[i] = texts[i - 1]  # the previous sample of the same model, repeated
    category = np.array(CATEGORIES, dtype=object)[query % len(CATEGORIES)]
    return {
        "query": query,
        "model": model,
        "sample": sample,
        "embeddings": embeddings,
        "texts": texts,
        "category": category,
        "names": [f"model-{i:02d}" for i in range(n_models)],
    }


def stage_similarity(pools) -> None:
    with single_blas_thread():
        for pool in pools:
            blocks = model_blocks(pool.embeddings, pool.model_index)
            intra_model_means(blocks)
            inter_model_means(blocks)
            typicality_from_blocks(blocks)


def stage_top_n(pools, max_n: int) -> None:
    with single_blas_thread():
        for pool in pools:
            unique_models_curve(pool.embeddings, pool.model_index, max_n=max_n)


def stage_lexical(pools) -> None:
    for pool in pools:
        _, position = np.unique(pool.model_index, return_inverse=True)
        pool_lexical_figures(pool.texts, position, int(position.max()) + 1)


def stage_tfidf(pools) -> None:
    for pool in pools:
        tfidf_vectors(pool.texts, dense=False)


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    pool_size.add_arguments(parser)
    parser.add_argument("--max-n", type=int, default=50)
    parser.add_argument("--draws", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=3, help="runs per stage (best kept)")
    parser.add_argument("--tfidf", action="store_true", help="also time the TF-IDF fallback")
    parser.add_argument("--json", type=Path, default=RESULTS / "diversity.json")
    parser.add_argument("--md", type=Path, default=RESULTS / "diversity.md")
    parser.add_argument("--workers", action="store_true", help="1 and 2 Celery workers")
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15"))
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench_workers"),
    )
    args = parser.parse_args()
    if args.workers:
        from bench.diversity_workers import measure_workers

        measure_workers(args, synthetic_corpus)
        return

    start = time.perf_counter()
    corpus = synthetic_corpus(args.queries, args.models, args.samples, args.dim, args.seed)
    generate_seconds = time.perf_counter() - start
    responses = corpus["query"].size
    settings = AnalysisSettings(max_n=args.max_n, bootstrap_draws=args.draws, seed=args.seed)
    timings: dict[str, float] = {}
    cpu_timings: dict[str, float] = {}
    outputs: dict[str, object] = {}

    def timed(stage: str, func, *func_args):
        for _ in range(args.repeat):
            begin, cpu_begin = time.perf_counter(), time.process_time()
            outputs[stage] = func(*func_args)
            elapsed, cpu = time.perf_counter() - begin, time.process_time() - cpu_begin
            if elapsed < timings.get(stage, float("inf")):
                timings[stage], cpu_timings[stage] = elapsed, cpu
            print(f"  {stage:<22} {elapsed:7.3f} s wall {cpu:7.3f} s cpu", flush=True)
        return outputs[stage]

    def split():
        return pools_from_arrays(
            corpus["query"],
            corpus["embeddings"],
            corpus["model"],
            corpus["sample"],
            corpus["category"],
            corpus["texts"],
        )

    print(f"{responses:,} responses generated in {generate_seconds:.1f} s", flush=True)
    pools = timed("split into pools", split)
    timed("similarity", stage_similarity, pools)
    timed("top-N (N=1..50)", stage_top_n, pools, args.max_n)
    timed("lexical", stage_lexical, pools)
    analysis = timed("pipeline (all)", analyse_corpus, pools, corpus["names"], settings)
    report = timed("report", analysis_report, analysis)
    if args.tfidf:
        timed("tf-idf fallback", stage_tfidf, pools)
    budget_stages = ("split into pools", "pipeline (all)", "report")
    total = sum(timings[stage] for stage in budget_stages)
    total_cpu = sum(cpu_timings[stage] for stage in budget_stages)

    tracemalloc.start()
    analyse_corpus(pools, corpus["names"], settings)
    traced_peak_mb = tracemalloc.get_traced_memory()[1] / 2**20
    tracemalloc.stop()

    results = {
        "corpus": {
            "queries": args.queries,
            "models": args.models,
            "samples": args.samples,
            "responses": responses,
            "dim": args.dim,
            "max_n": args.max_n,
            "bootstrap_draws": args.draws,
            "categories": len(CATEGORIES),
        },
        "seconds_best_of": args.repeat,
        "seconds": {stage: round(value, 3) for stage, value in timings.items()},
        "cpu_seconds": {stage: round(value, 3) for stage, value in cpu_timings.items()},
        "total_seconds": round(total, 3),
        "total_cpu_seconds": round(total_cpu, 3),
        "responses_per_second": round(responses / total),
        "peak_rss_mb": round(peak_rss_mb(), 1),
        "pipeline_tracemalloc_peak_mb": round(traced_peak_mb, 1),
        "budget": {"seconds": 30, "peak_memory_mb": 2048},
        "within_budget": total < 30 and peak_rss_mb() < 2048,
        "figures": {
            "intra_model_mean": report["intra_model"]["pooled"]["mean"],
            "top_n_at_5": report["top_n"]["mean_unique_models"][4],
            "top_n_at_50": report["top_n"]["mean_unique_models"][-1],
        },
        "machine": {
            "cpus": os.cpu_count(),
            "threadpoolctl": importlib.util.find_spec("threadpoolctl") is not None,
            "load_average_1min": round(os.getloadavg()[0], 2),
            "python": platform.python_version(),
            "numpy": np.__version__,
        },
    }
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=2) + "\n")
    rows = "\n".join(
        f"| {stage} | {value:.3f} | {cpu_timings[stage]:.3f} |" for stage, value in timings.items()
    )
    args.md.write_text(
        f"""# Homogeneity analyses benchmark

{args.queries:,} queries x {args.models} models x {args.samples} samples = {responses:,} responses,
{args.dim}-d float32 embeddings, top-N for N = 1..{args.max_n}, {args.draws:,} bootstrap draws,
{len(CATEGORIES)} categories. Wall-clock seconds, best of {args.repeat}
(`.venv/bin/python bench/diversity.py`).

| stage | wall s | CPU s |
| --- | ---: | ---: |
{rows}

The stages similarity, top-N and lexical are timed on their own for the breakdown; the
pipeline row runs all of them plus the pooled and per-category summaries. The tf-idf row
(only with `--tfidf`) builds the lexical fallback embedding of every pool and is not part
of the budget.

- **Total (split + pipeline + report): {total:.2f} s wall, {total_cpu:.2f} s CPU**
  ({responses / total:,.0f} responses/s); budget 30 s. The code is single-threaded apart
  from a few BLAS products, so CPU time is close to what the run takes on an idle machine;
  wall time grows with whatever else shares the two cores.
- Peak RSS of the whole process (synthetic corpus with texts included):
  **{peak_rss_mb():.0f} MB**; tracemalloc peak of one pipeline run: {traced_peak_mb:.0f} MB;
  budget 2 GB.
- Machine: {os.cpu_count()} CPUs, 1-minute load average {os.getloadavg()[0]:.2f} at the end of
  the run, Python {platform.python_version()}, numpy {np.__version__}, threadpoolctl
  {"installed (BLAS held to one thread while pools are measured)" if importlib.util.find_spec("threadpoolctl") else "not installed"}.
"""
    )
    print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
