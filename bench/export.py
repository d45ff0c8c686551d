"""Export benchmark on PostgreSQL: the platform's long export against a plain COPY.

The reference is what PostgreSQL alone does: ``COPY (SELECT ...) TO STDOUT (FORMAT csv)``
of the same joined rows (label, item, query, response, annotator, batch) in the same
order (item position, item, submission time, label), read by the client. Against it, in
the same run, each format of the platform's long export (``export_to_file``: the command's
and the background job's path) of the same batch is timed, with the peak memory it adds
to the process (``VmHWM`` reset through ``/proc/self/clear_refs``). The COPY and the
exports run one after the other in each of ``--repeat`` rounds, and each keeps its best
round. The figure of merit is COPY time ÷ export time (1.0 = as fast as COPY). The export
turns PostgreSQL's JIT compilation off for its statement; the COPY runs with the server's
setting, and again with JIT off, for a second ratio.

The batch is ``bench/analysis.py``'s ``bench-large``: 26,070 absolute items (1,738 queries
x 15 responses) x 25 counted labels = 651,750 labels from 2,300 annotators, written with
COPY into the database once and reused (``--regenerate`` rebuilds it).

    .venv/bin/python bench/export.py                     # bench/results/export.{json,md}
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_export .venv/bin/python bench/export.py
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.analysis import SCALES, ensure_database, generate, setup_django  # noqa: E402
from bench.peak_memory import PeakAdded  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/bench_export"
RESULTS = REPO / "bench" / "results"
SLUG = "bench-large"
FORMATS = ("csv", "jsonl", "parquet")
# the long CSV's share of COPY's speed to reach (issue 22); JSONL and Parquet are reported
TARGET_SHARE_OF_COPY = 0.8
TARGET_FORMAT = "csv"


def copy_sql(batch_pk: int) -> str:
    """The long layout's rows of an absolute batch (counted labels), as PostgreSQL
    alone would produce them."""
    return f"""
        COPY (
            SELECT b.slug, b.kind, i.item_id, q.query_id, q.text, q.category,
                   r.response_id, r.model, r.text, an.pseudonym, l.value, l.status,
                   NULLIF(l.shown_order, ''), l.check_passed, l.duration_ms, l.submitted_at
            FROM annotation_label l
            JOIN annotation_item i ON i.id = l.item_id
            JOIN annotation_query q ON q.id = i.query_id
            JOIN annotation_response r ON r.id = i.response_id
            JOIN annotation_annotator an ON an.id = l.annotator_id
            JOIN annotation_batch b ON b.id = l.batch_id
            WHERE l.batch_id = {int(batch_pk)} AND l.status = 'counted'
            ORDER BY i.position, i.id, l.submitted_at, l.id
        ) TO STDOUT (FORMAT csv, HEADER)
    """


def _vacuum_analyze() -> None:
    """As autovacuum would have done by the time anyone exports a finished batch."""
    import psycopg

    with psycopg.connect(os.environ["DATABASE_URL"], autocommit=True) as connection:
        for table in ("label", "item", "query", "response", "annotator", "batch"):
            connection.execute(f"VACUUM ANALYZE annotation_{table}")


def timed_copy(batch_pk: int, jit: bool = True) -> tuple[float, int]:
    """Seconds for the COPY, read whole by the client; and the bytes it produced. With
    ``jit=False`` PostgreSQL's JIT compilation is off, as the export turns it off for its
    own statement (``exports.streaming``); otherwise the server's setting holds."""
    import psycopg

    url = os.environ["DATABASE_URL"]
    with psycopg.connect(url) as connection, connection.cursor() as cursor:
        if not jit:
            cursor.execute("SET jit = off")
        started = time.perf_counter()
        size = 0
        with cursor.copy(copy_sql(batch_pk)) as copy:
            for block in copy:
                size += len(block)
        return time.perf_counter() - started, size


def timed_export(batch, fmt: str, folder: Path) -> tuple[float, int, int, float]:
    """Seconds, rows, bytes written and peak memory added (MB) of one long export."""
    from annotation.services.exports.delivery import export_to_file

    path = folder / f"long.{fmt}"
    with PeakAdded() as peak:
        started = time.perf_counter()
        rows = export_to_file(batch, "long", fmt, path)
        seconds = time.perf_counter() - started
    size = path.stat().st_size
    path.unlink()
    return seconds, rows, size, peak.mb


def measure(repeat: int) -> dict:
    from annotation.models import Batch

    batch = Batch.objects.get(slug=SLUG)
    labels = batch.labels.filter(status="counted").count()
    _vacuum_analyze()
    timed_copy(batch.pk)  # warm-up: the first read of fresh rows also sets their hint bits
    # round after round, the references and the exports side by side (the load changes)
    copy_runs, unjitted_runs, export_runs = [], [], {fmt: [] for fmt in FORMATS}
    with tempfile.TemporaryDirectory(prefix="bench-export-") as folder:
        for round_ in range(repeat):
            copy_runs.append(timed_copy(batch.pk))
            unjitted_runs.append(timed_copy(batch.pk, jit=False))
            for fmt in FORMATS:
                export_runs[fmt].append(timed_export(batch, fmt, Path(folder)))
            print(f"  round {round_ + 1} of {repeat}", flush=True)
    copy_seconds = min(seconds for seconds, _ in copy_runs)
    unjitted_seconds = min(seconds for seconds, _ in unjitted_runs)
    result = {
        "batch": SLUG,
        "labels": labels,
        "copy": {"seconds": round(copy_seconds, 3), "bytes": copy_runs[0][1]},
        "copy_without_jit": {"seconds": round(unjitted_seconds, 3)},
        "exports": {},
    }
    for fmt, runs in export_runs.items():
        best = min(runs, key=lambda run: run[0])
        result["exports"][fmt] = {
            "seconds": round(best[0], 3),
            "rows": best[1],
            "bytes": best[2],
            "peak_mb": round(max(run[3] for run in runs), 1),
            "share_of_copy": round(copy_seconds / best[0], 3),
            "share_of_copy_without_jit": round(unjitted_seconds / best[0], 3),
            "labels_per_s": round(labels / best[0]),
        }
        print(f"  long {fmt}: {json.dumps(result['exports'][fmt])}", flush=True)
    return result


def render(run: dict) -> str:
    result = run["result"]
    copy = result["copy"]
    lines = [
        "# Export benchmark: the long export against PostgreSQL's COPY",
        "",
        f"Generated by `bench/export.py` on {run['when']}; best of {run['repeat']}. Batch "
        f"`{result['batch']}`: {result['labels']:,} counted labels (26,070 items x 25). "
        f"Reference: `COPY (SELECT <the same joined, ordered rows>) TO STDOUT (FORMAT csv)` "
        f"read by the client: **{copy['seconds']} s** ({copy['bytes'] / 1e6:.1f} MB). "
        f"Target: the {TARGET_FORMAT.upper()} export at least {TARGET_SHARE_OF_COPY} of COPY's "
        f"speed, i.e. within {1 / TARGET_SHARE_OF_COPY:.2f}x of its time (share of COPY ≥ "
        f"{TARGET_SHARE_OF_COPY}).",
        "",
        f"The same COPY with JIT compilation off (the export turns it off for its own "
        f"statement): {result['copy_without_jit']['seconds']} s. Each export and each "
        f"COPY: best of {run['repeat']} rounds, run side by side in each round.",
        "",
        "| format | seconds | labels/s | MB written | peak memory added (MB) | share of COPY "
        "| share of COPY without JIT |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    for fmt, figures in result["exports"].items():
        mark = ""
        if fmt == TARGET_FORMAT:
            mark = " ✓" if figures["share_of_copy"] >= TARGET_SHARE_OF_COPY else " ✗"
        lines.append(
            f"| {fmt} | {figures['seconds']} | {figures['labels_per_s']:,} | "
            f"{figures['bytes'] / 1e6:.1f} | {figures['peak_mb']} | "
            f"{figures['share_of_copy']}{mark} | {figures['share_of_copy_without_jit']} |"
        )
    machine = run["machine"]
    lines += [
        "",
        f"Machine: {machine['cpus']} cores, load average {machine['load_average_before']} "
        f"before and {machine['load_average_after']} after the run (other work on the "
        f"machine shares the cores); Python {machine['python']}.",
        "",
    ]
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="rounds; each keeps its best")
    parser.add_argument("--regenerate", action="store_true", help="rebuild the batch")
    parser.add_argument("--out-dir", default=str(RESULTS))
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", DEFAULT_URL)
    if not url.startswith("postgres"):
        sys.exit("bench/export.py measures PostgreSQL: set DATABASE_URL=postgres://...")
    load_before = round(os.getloadavg()[0], 2)
    ensure_database(url)
    setup_django(url)
    from annotation.models import Batch

    if args.regenerate or not Batch.objects.filter(slug=SLUG).exists():
        started = time.perf_counter()
        generate(SLUG, **SCALES[SLUG])
        print(f"generated {SLUG} in {time.perf_counter() - started:.1f} s", flush=True)
    result = measure(args.repeat)
    run = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "repeat": args.repeat,
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_before": load_before,
            "load_average_after": round(os.getloadavg()[0], 2),
            "python": platform.python_version(),
        },
        "target_share_of_copy": TARGET_SHARE_OF_COPY,
        "result": result,
    }
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    (out / "export.json").write_text(json.dumps(run, indent=2) + "\n")
    text = render(run)
    (out / "export.md").write_text(text)
    print(text)


if __name__ == "__main__":
    main()
