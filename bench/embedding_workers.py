"""``bench/embedding.py --workers``: the corpus embeddings job on 1 and 2 Celery worker
processes, and one process as today (see ``bench/embedding.py`` and ``bench/workers.py``)."""

from __future__ import annotations

import json
from pathlib import Path

from bench import baseline, workers

MODELS, SAMPLES = 16, 4  # a query's responses; --worker-texts sets the queries
CHUNK_ROWS_OF_A_RUN = 2048  # the part of a real run (local_embedding.LOCAL_CHUNK_ROWS)


def _pool(path: Path, n_texts: int, make_texts) -> None:
    queries = max(1, n_texts // (MODELS * SAMPLES))
    responses = iter(make_texts(queries * MODELS * SAMPLES, seed=11))
    with open(path, "w", encoding="utf-8") as stream:
        for q in range(queries):
            for m in range(MODELS):
                for s in range(1, SAMPLES + 1):
                    row = {"query_id": f"q{q:04d}", "query": f"Query {q}?", "model": f"m{m:02d}",
                           "sample": s, "response_id": f"q{q}-m{m}-s{s}",
                           "response": next(responses)}  # fmt: skip
                    stream.write(json.dumps(row) + "\n")


def measure_workers(args, make_texts) -> dict:
    data_dir = workers.setup(args.database_url, args.redis)
    from diversity.corpora.models import Corpus
    from diversity.corpora.services.imports import import_corpus
    from diversity.corpora.services.local_embedding import embed_corpus, local_model_embedder
    from diversity.homogeneity import embedding

    repeat = args.repeat or 3
    uptime_start = workers.uptime()
    Corpus.objects.filter(name="bench-embed").delete()
    _pool(data_dir / "pool.jsonl", args.worker_texts, make_texts)
    corpus = import_corpus("bench-embed", data_dir / "pool.jsonl")
    n = corpus.n_responses

    # one process as today: embed_corpus, ONNX Runtime's own threads (one per core)
    model = local_model_embedder()
    one_process = workers.time_one_process(
        lambda: embed_corpus(corpus, embedder=model, restart=True), args.one_process_runs
    )

    params = {"source": "local_model", "dtype": "float32", "restart": True,
              "chunk_rows": args.chunk_rows}  # fmt: skip
    compared = workers.compare("corpus_embeddings", corpus, params, (1, 2), repeat, data_dir)
    one, two = compared[1]["best"], compared[2]["best"]
    speedup = one["wall_s"] / two["wall_s"]
    per_response = one["part_s_mean"] / args.chunk_rows  # one core, from the 1-worker run
    result = {
        "model": embedding.MODEL_NAME,
        "embedder": f"{embedding.MODEL_NAME} on {embedding.active_providers()[0]}",
        "responses": n,
        "parts": one["parts"],
        "chunk_rows": args.chunk_rows,
        "one_process_s": min(one_process),
        "one_process_runs": one_process,
        "workers": {str(count): value for count, value in compared.items()},
        "speedup_2_over_1": round(speedup, 2),
        "responses_per_s": {
            "one process": round(n / min(one_process), 1),
            "1 worker": round(n / one["wall_s"], 1),
            "2 workers": round(n / two["wall_s"], 1),
        },
        "core_s_per_response": round(per_response, 5),
        "core_s_per_2048_part": round(per_response * CHUNK_ROWS_OF_A_RUN, 1),
        "study_responses": workers.STUDY_RESPONSES,
        "cores_for_the_study_in_an_hour": workers.cores_for_an_hour(per_response, speedup / 2),
        "cores_for_the_study_in_an_hour_ideal": workers.cores_for_an_hour(per_response, 1.0),
        **workers.machine_and_time(uptime_start),
    }
    Corpus.objects.filter(pk=corpus.pk).delete()
    baseline.write_results("embedding-workers", result, markdown(result, repeat).splitlines())
    return result


def markdown(r: dict, repeat: int) -> str:
    rows = workers.best_rows(
        r,
        lambda label, best: (
            f"{r['responses_per_s'][label]:,} | {best['workers_used']} "
            f"| {best['parts_at_once']:.2f} | {best['part_s_mean']:.2f}"
        ),
    )
    return f"""# Corpus embeddings on Celery workers

The embeddings job of a corpus of {r["responses"]:,} synthetic responses (40-90 words), in
{r["parts"]} parts of {r["chunk_rows"]} responses, on 1 and on 2 `celery worker --pool solo`
processes with `EMBEDDING_THREADS=1` (`bench/embedding.py --workers`, `bench/workers.py`);
timed from `start_job` to the job's success, best of {repeat}, the counts alternating run by
run. Embedder: **{r["embedder"]}** (the real model of the `embed` extra).

| workers | wall s | responses/s | workers that took parts | parts at once | s a part | load before |
| --- | ---: | ---: | ---: | ---: | ---: | ---: |
{rows}
| one process, ONNX Runtime's own threads (today's `embed_corpus`; best of {len(r["one_process_runs"])}) | {r["one_process_s"]:.2f} | {r["responses_per_s"]["one process"]:,} | | | | |

"Parts at once" is the parts' seconds added up over the wall time: how many parts were
running on average, i.e. how busy the job kept its workers; "s a part" is a part's own
time, which grows when the machine's other work takes the cores the workers run on.

- **2 workers / 1 worker: {r["speedup_2_over_1"]:.2f}x.**
- One core embeds a response in {r["core_s_per_response"] * 1000:.1f} ms: a part of
  2,048 (the parts of a real run) costs **{r["core_s_per_2048_part"]:.0f} core-seconds**.
  The study's {r["study_responses"]:,} responses in under an hour need
  **{r["cores_for_the_study_in_an_hour"]} worker cores** at the efficiency measured with 2
  workers ({r["speedup_2_over_1"] / 2:.0%} of linear), {r["cores_for_the_study_in_an_hour_ideal"]}
  if every core kept its one-worker speed.
{workers.machine_line(r)}
"""
