"""``bench/diversity.py --workers``: the corpus analysis job of the synthetic study-sized
pool on 1 and 2 Celery worker processes, and in one process (see ``bench/diversity.py`` and
``bench/workers.py``)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from bench import baseline, workers


def _import(corpus_arrays: dict, folder: Path):
    from diversity.corpora.models import Corpus
    from diversity.corpora.services.embeddings import import_embeddings
    from diversity.corpora.services.imports import import_corpus

    Corpus.objects.filter(name="bench-diversity").delete()
    names = corpus_arrays["names"]
    with open(folder / "pool.jsonl", "w", encoding="utf-8") as stream:
        for i, text in enumerate(corpus_arrays["texts"]):
            q, m = int(corpus_arrays["query"][i]), int(corpus_arrays["model"][i])
            s = int(corpus_arrays["sample"][i]) + 1
            row = {"query_id": f"q{q:05d}", "query": f"Query {q}?",
                   "category": str(corpus_arrays["category"][i]), "model": names[m],
                   "sample": s, "response_id": f"q{q}-m{m}-s{s}", "response": text}  # fmt: skip
            stream.write(json.dumps(row) + "\n")
    np.save(folder / "embeddings.npy", corpus_arrays["embeddings"])
    corpus = import_corpus("bench-diversity", folder / "pool.jsonl")
    return import_embeddings(corpus, folder / "embeddings.npy")


def measure_workers(args, synthetic_corpus) -> dict:
    data_dir = workers.setup(args.database_url, args.redis)
    from diversity.corpora.services.analyses import JOB_KIND, analyse_now, analysis_params

    uptime_start = workers.uptime()
    arrays = synthetic_corpus(args.queries, args.models, args.samples, args.dim, args.seed)
    corpus = _import(arrays, data_dir)
    del arrays
    params = analysis_params(bootstrap=args.draws, seed=args.seed)

    def analyse_here() -> None:
        job = analyse_now(corpus, params)  # the same parts, one after another, here
        assert job.state == "succeeded", job.message

    one_process = workers.time_one_process(analyse_here, args.repeat)
    compared = workers.compare(JOB_KIND, corpus, params, (1, 2), args.repeat, data_dir)
    one, two = compared[1]["best"], compared[2]["best"]
    speedup = one["wall_s"] / two["wall_s"]
    n = corpus.n_responses
    per_response = one["part_s_sum"] / n  # one core, measuring
    result = {
        "corpus": {
            "queries": args.queries,
            "models": args.models,
            "samples": args.samples,
            "responses": n,
            "dim": args.dim,
            "bootstrap_draws": args.draws,
        },  # fmt: skip
        "parts": one["parts"],
        "one_process_s": min(one_process),
        "one_process_runs": one_process,
        "workers": {str(count): value for count, value in compared.items()},
        "speedup_2_over_1": round(speedup, 2),
        "core_s_per_response_measured": round(per_response, 7),
        "assembly_s": one["assembly_s"],
        "study_responses": workers.STUDY_RESPONSES,
        "study_core_s_measuring": round(per_response * workers.STUDY_RESPONSES),
        **workers.machine_and_time(uptime_start),
    }
    baseline.write_results("diversity-workers", result, markdown(result, args.repeat).splitlines())
    return result


def markdown(r: dict, repeat: int) -> str:
    c = r["corpus"]
    rows = workers.best_rows(
        r,
        lambda _, best: (
            f"{best['workers_used']} | {best['parts_at_once']:.2f} "
            f"| {best['part_s_mean']:.3f} | {best['assembly_s']:.2f}"
        ),
    )
    return f"""# Corpus analysis on Celery workers

The `corpus_analysis` job of the synthetic pool of `bench/diversity.py` ({c["queries"]:,}
queries x {c["models"]} models x {c["samples"]} samples = {c["responses"]:,} responses,
{c["dim"]}-d embeddings, {c["bootstrap_draws"]:,} bootstrap draws) imported into PostgreSQL,
in {r["parts"]} parts of whole queries, on 1 and on 2 `celery worker --pool solo` processes
(`bench/diversity.py --workers`, `bench/workers.py`); timed from `start_job` to the job's
success, best of {repeat}, the counts alternating run by run.

| workers | wall s | workers that took parts | parts at once | s a part | assembly s | load before |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
{rows}
| one process (the same job without a broker) | {r["one_process_s"]:.2f} | | | | | |

"Parts at once" is the parts' seconds added up over the wall time (how busy the job kept
its workers); "s a part" grows when the machine's other work takes the workers' cores.
Every run: `bench/results/diversity-workers.json`.

- **2 workers / 1 worker: {r["speedup_2_over_1"]:.2f}x.** The assembly (the summaries'
  bootstraps, the report and its files) runs once, after the parts.
- Measuring costs {r["core_s_per_response_measured"] * 1e6:.0f} µs of one core a response: the
  study's {r["study_responses"]:,} responses are about {r["study_core_s_measuring"]:,}
  core-seconds of parts, minutes on a few workers.
{workers.machine_line(r)}
"""
