"""Corpus import benchmark on PostgreSQL: a study-sized response pool, streamed in.

A synthetic pool of ``--queries`` x ``--models`` x ``--samples`` responses (default 1,000 x
25 x 4 = 100,000; 40-90 words each, with categories) is written as JSONL and as CSV and
imported by ``import_corpus`` (what ``manage.py import_corpus`` and the import job run:
every row checked, written with ``COPY`` in one transaction). Also timed: the same file
refused at its very last line (everything written, then rolled back), and the import of
384-dimensional float32 embeddings of every response from ``.npz`` and ``.npy``. Each
figure is wall-clock and CPU seconds (best of ``--repeat``) with the memory the step adds
to the process at its peak (``VmHWM`` reset through ``/proc/self/clear_refs``); the
2.6 M-response estimate scales the JSONL rate linearly (the work per row is constant: the
cross-row checks are an ``O(n log n)`` sort of 64-bit keys at the end).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_corpus \\
        .venv/bin/python bench/corpus_import.py          # bench/results/corpus_import.{json,md}
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import shutil
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import pool_size  # noqa: E402
from bench.analysis import ensure_database, setup_django  # noqa: E402
from bench.peak_memory import PeakAdded  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/bench_corpus"
RESULTS = REPO / "bench" / "results"
CATEGORIES = ["advice", "brainstorm", "code", "creative", "facts", "math", "opinion", "planning"]
WORDS = (
    "the of and to in is that for it as with was on be by this are or from at which an "
    "but not have has had can will would one all there their more about when so what up "
    "out if into time some could them other than then now only its also after new use "
    "river light city music story garden winter market ocean forest system energy memory "
    "future signal pattern journey balance window silver morning quiet simple bright"
).split()
STUDY_RESPONSES = 2_600_000


def synthetic_rows(n_queries: int, n_models: int, n_samples: int, seed: int):
    rng = random.Random(seed)
    for q in range(n_queries):
        category = CATEGORIES[q % len(CATEGORIES)]
        query = f"Query {q}: " + " ".join(rng.choices(WORDS, k=12)) + "?"
        for m in range(n_models):
            for s in range(1, n_samples + 1):
                yield {
                    "query_id": f"q{q:05d}",
                    "query": query,
                    "category": category,
                    "subcategory": f"{category}-{q % 3}",
                    "model": f"model-{m:02d}",
                    "sample": s,
                    "response_id": f"q{q:05d}-m{m:02d}-s{s}",
                    "response": " ".join(rng.choices(WORDS, k=rng.randint(40, 90))) + ".",
                }


def write_files(folder: Path, args) -> dict[str, Path]:
    import csv

    jsonl = folder / "pool.jsonl"
    csv_path = folder / "pool.csv"
    header = ["query_id", "query", "category", "subcategory", "model", "sample",
              "response_id", "response"]  # fmt: skip
    with open(jsonl, "w", encoding="utf-8") as a, open(csv_path, "w", newline="") as b:
        writer = csv.writer(b)
        writer.writerow(header)
        for row in synthetic_rows(args.queries, args.models, args.samples, args.seed):
            a.write(json.dumps(row) + "\n")
            writer.writerow([row[key] for key in header])
    bad = folder / "pool-bad-last-line.jsonl"
    with open(jsonl, "rb") as source, open(bad, "wb") as target:
        for line in source:
            target.write(line)
        target.write(b'{"query_id": "q00000", "query": "x", "model": "m", "sample": "bad", '
                     b'"response_id": "extra", "response": "x"}\n')  # fmt: skip
    return {"jsonl": jsonl, "csv": csv_path, "bad": bad}


def timed(step) -> tuple[float, float, float]:
    """(wall s, CPU s, MB added at peak) of ``step()``."""
    with PeakAdded() as peak:
        wall, cpu = time.perf_counter(), time.process_time()
        step()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return wall, cpu, peak.mb


def step_figures(runs: list[tuple[float, float, float]], responses: int) -> dict:
    """A step's figures from its ``timed`` runs: the fastest run's seconds and rate (the
    machine is shared), and the highest peak of any run (what the step may need)."""
    wall, cpu, _ = min(runs)
    return {
        "wall_s": round(wall, 3),
        "cpu_s": round(cpu, 3),
        "peak_mb": round(max(run[2] for run in runs), 1),
        "responses_per_s": round(responses / wall),
    }


def drop_corpora() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "TRUNCATE corpora_corpusresponse, corpora_corpusquery, corpora_corpusmodel, "
            "corpora_corpusselection, corpora_corpus CASCADE"
        )


def measure(args) -> dict:
    import numpy as np

    from core.tabular import ImportRejected
    from diversity.corpora.models import Corpus, CorpusResponse
    from diversity.corpora.services.embeddings import import_embeddings
    from diversity.corpora.services.imports import import_corpus

    n = args.queries * args.models * args.samples
    results: dict = {"steps": {}}
    with tempfile.TemporaryDirectory() as folder:
        files = write_files(Path(folder), args)
        results["file_bytes"] = {key: path.stat().st_size for key, path in files.items()}

        def best(name: str, make_step, stored: int) -> None:
            runs = []
            for _ in range(args.repeat):
                drop_corpora()
                runs.append(timed(make_step()))
                assert CorpusResponse.objects.count() == stored, name
            results["steps"][name] = step_figures(runs, n)
            wall, cpu, _ = min(runs)
            print(f"{name}: {wall:.2f} s wall, {cpu:.2f} s CPU", file=sys.stderr)

        for fmt in ("jsonl", "csv"):
            best(f"import {fmt}", lambda fmt=fmt: lambda: import_corpus("bench", files[fmt]), n)

        def refused():
            try:
                import_corpus("bench", files["bad"])
            except ImportRejected:
                return
            raise AssertionError("the bad file was accepted")

        best("refused at the last line", lambda: refused, 0)

        drop_corpora()
        corpus = import_corpus("bench", files["jsonl"])
        corpus = Corpus.objects.get(pk=corpus.pk)
        rng = np.random.default_rng(args.seed)
        matrix = rng.normal(size=(n, args.dim)).astype(np.float32)
        ids = np.array([row_id for row_id in corpus.responses.order_by("row_index")
                        .values_list("response_id", flat=True)])  # fmt: skip
        npz = Path(folder) / "emb.npz"
        npy = Path(folder) / "emb.npy"
        np.savez(npz, response_id=ids, embedding=matrix)
        np.save(npy, matrix)
        del matrix
        results["file_bytes"]["npz"] = npz.stat().st_size
        for name, path in (("embeddings npz", npz), ("embeddings npy", npy)):
            runs = [timed(lambda path=path: import_embeddings(corpus, path))
                    for _ in range(args.repeat)]  # fmt: skip
            results["steps"][name] = step_figures(runs, n)
            print(f"{name}: {min(runs)[0]:.2f} s wall", file=sys.stderr)
        drop_corpora()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    pool_size.add_arguments(parser)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--json", default=str(RESULTS / "corpus_import.json"))
    parser.add_argument("--md", default=str(RESULTS / "corpus_import.md"))
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", DEFAULT_URL)
    if not url.startswith("postgres"):
        raise SystemExit("this benchmark needs PostgreSQL (DATABASE_URL=postgres://...)")
    ensure_database(url)
    setup_django(url)
    from django.conf import settings

    settings.DATA_DIR = Path(tempfile.mkdtemp(prefix="bench-corpus-data-"))
    n = args.queries * args.models * args.samples
    try:
        results = measure(args)
    finally:
        shutil.rmtree(settings.DATA_DIR, ignore_errors=True)  # the embedding files
    jsonl = results["steps"]["import jsonl"]
    results.update(
        {
            "responses": n,
            "queries": args.queries,
            "models": args.models,
            "samples": args.samples,
            "dimension": args.dim,
            "repeat": args.repeat,
            "estimate_2_6m_s": round(jsonl["wall_s"] * STUDY_RESPONSES / n),
            "machine": {
                "cpus": os.cpu_count(),
                "load_1min_end": round(os.getloadavg()[0], 2),
                "python": platform.python_version(),
            },
            "database": "PostgreSQL (local)",
            "at": datetime.now(UTC).isoformat(timespec="seconds"),
        }
    )
    Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    Path(args.md).write_text(markdown(results))
    print(markdown(results))


def markdown(r: dict) -> str:
    rows = "\n".join(
        f"| {name} | {s['wall_s']:.2f} | {s['cpu_s']:.2f} | {s['responses_per_s']:,} | "
        f"{s['peak_mb']:.0f} |"
        for name, s in r["steps"].items()
    )
    mb = {key: value / 1e6 for key, value in r["file_bytes"].items()}
    return f"""# Corpus import benchmark (PostgreSQL)

{r["queries"]:,} queries x {r["models"]} models x {r["samples"]} samples = {r["responses"]:,}
responses (40-90 words each; JSONL {mb["jsonl"]:.0f} MB, CSV {mb["csv"]:.0f} MB), imported by
`import_corpus` into a local PostgreSQL; then {r["dimension"]}-d float32 embeddings of every
response ({mb["npz"]:.0f} MB `.npz`). Best of {r["repeat"]}
(`DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_corpus .venv/bin/python
bench/corpus_import.py`).

| step | wall s | CPU s (client) | responses/s | peak MB added |
| --- | ---: | ---: | ---: | ---: |
{rows}

- "refused at the last line": the same file plus one bad row at the end: every row is
  checked (the import checks the whole file before it writes anything), then refused.
- An import reads the file twice: a checking pass outside any transaction (its progress
  is visible to the page), then the writing pass in one transaction.
- CPU s counts this process only (parsing, checks, COPY encoding); the rest of the wall time
  is PostgreSQL writing rows and building the unique indexes.
- **Estimate for the study's 2.6 M responses (linear in rows): about
  {r["estimate_2_6m_s"] / 60:.1f} minutes** for the JSONL import. The memory an import adds
  grows with the rows only through the cross-row checks (a few 64-bit numbers a response)
  and each distinct query's text: about 100 MB at 1 M responses
  (`bench/results/corpus_import-1m.md`), so about 270 MB at 2.6 M. An embedding import adds
  the id → row map (Parquet, `.npz`) and at most 64 MB of mapped rows at a time.
- Machine: {r["machine"]["cpus"]} CPUs shared with the database, 1-minute load average
  {r["machine"]["load_1min_end"]} at the end, Python {r["machine"]["python"]}; {r["at"]}.
"""


if __name__ == "__main__":
    main()
