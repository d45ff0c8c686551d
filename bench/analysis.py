"""Analysis benchmark on PostgreSQL: the phases of a batch's analysis, the current code
against a baseline commit in the same run.

Two synthetic absolute batches, written straight into the database with COPY:

* ``bench-large``: 26,070 items (1,738 queries x 15 responses) x 25 labels, 2,300 annotators;
* ``bench-study``: the study's own scale, 750 items (50 x 15) x 25 labels;

each with 6 score sources (2 reward models, 2 LMs, 2 judges) of decreasing fidelity, all
items in one category. For each batch and each version of the code (``--baseline``, default
the commit before this round of speed work), alternately in fresh processes, it times the
phases: loading (labels and scores into arrays), the metric core (the whole report without
bootstrap), the bootstrap (the report with 1,000 resamples, less the core) and the whole
analysis (``analyse_batch``: loading, report, bundles). Best of ``--rounds`` per phase; the
ratios are current over baseline. Writes ``bench/results/analysis.json`` and ``.md``.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_analysis .venv/bin/python bench/analysis.py

The database named in DATABASE_URL is created if missing; the data is generated once and
reused by later runs (``--regenerate`` to rebuild it). ``--baseline none`` measures the
current code alone.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
import uuid
from contextlib import nullcontext
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import baseline  # noqa: E402

DEFAULT_BASELINE = "c658f9a"  # main before this round of speed work
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/bench_analysis"

SCALES = {
    "bench-large": {"queries": 1_738, "responses_per_query": 15, "annotators": 2_300},
    "bench-study": {"queries": 50, "responses_per_query": 15, "annotators": 300},
}
LABELS_PER_ITEM = 25
SOURCES = [  # (name, kind, noise around the latent quality)
    ("rm-strong", "reward_model", 0.4),
    ("rm-weak", "reward_model", 1.5),
    ("lm-large:neg-ppl", "lm", 1.0),
    ("lm-small:neg-ppl", "lm", 3.0),
    ("judge-a:overall", "judge", 0.7),
    ("judge-b:overall", "judge", 2.0),
]


def ensure_database(url: str) -> None:
    import psycopg

    name = url.rsplit("/", 1)[1]
    admin_url = url.rsplit("/", 1)[0] + "/postgres"
    with psycopg.connect(admin_url, autocommit=True) as connection:
        exists = connection.execute(
            "SELECT 1 FROM pg_database WHERE datname = %s", [name]
        ).fetchone()
        if not exists:
            connection.execute(f'CREATE DATABASE "{name}"')


def setup_django(url: str, migrate: bool = True) -> None:
    os.environ["DATABASE_URL"] = url
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.core.management import call_command

    if migrate:
        call_command("migrate", verbosity=0)


def _copy(cursor, table: str, columns: list[str], rows) -> None:
    with cursor.copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def _next_id(cursor, table: str) -> int:
    cursor.execute(f"SELECT COALESCE(MAX(id), 0) + 1 FROM {table}")
    return cursor.fetchone()[0]


def _reset_sequence(cursor, table: str) -> None:
    cursor.execute(
        f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
        f"(SELECT COALESCE(MAX(id), 1) FROM {table}))"
    )


def generate(slug: str, queries: int, responses_per_query: int, annotators: int, seed: int = 0):
    """Write one synthetic batch with COPY (seconds for 26k items x 25 labels)."""
    from django.db import connection, transaction

    from analysis.models import Score, ScoreSource
    from annotation.models import Batch, Label

    existing = Batch.objects.filter(slug=slug).first()
    if existing is not None:
        Score.objects.filter(response__query__query_id__startswith=f"{slug}-").delete()
        Label.objects.filter(batch=existing).delete()
        existing.assignments.all().delete()
        existing.items.all().delete()
        existing.delete()
    rng = np.random.default_rng(seed)
    n_items = queries * responses_per_query
    quality = rng.uniform(1, 5, n_items)
    now = datetime.now(UTC)
    with transaction.atomic(), connection.cursor() as wrapper:
        cursor = wrapper.cursor  # the psycopg cursor, for COPY
        batch = Batch.objects.create(
            slug=slug,
            title=slug,
            kind="absolute",
            annotations_per_item=LABELS_PER_ITEM,
            state="closed",
        )
        query0 = _next_id(cursor, "annotation_query")
        _copy(
            cursor,
            "annotation_query",
            ["id", "query_id", "text", "category"],
            (
                (query0 + q, f"{slug}-q{q}", f"Synthetic prompt {q}", "Synthetic")
                for q in range(queries)
            ),
        )
        response0 = _next_id(cursor, "annotation_response")
        _copy(
            cursor,
            "annotation_response",
            ["id", "response_id", "query_id", "model", "text"],
            (
                (
                    response0 + i,
                    f"{slug}-r{i}",
                    query0 + i // responses_per_query,
                    f"m{i % 7}",
                    f"Answer {i}",
                )
                for i in range(n_items)
            ),
        )
        item0 = _next_id(cursor, "annotation_item")
        _copy(
            cursor,
            "annotation_item",
            ["id", "batch_id", "item_id", "position", "query_id", "response_id", "content", "metadata",
             "target", "reserved_count", "counted_count"],
            (
                (item0 + i, batch.pk, f"i{i}", i, query0 + i // responses_per_query, response0 + i, "{}",
                 "{}", LABELS_PER_ITEM, LABELS_PER_ITEM, LABELS_PER_ITEM)
                for i in range(n_items)
            ),
        )  # fmt: skip
        annotator0 = _next_id(cursor, "annotation_annotator")
        _copy(
            cursor,
            "annotation_annotator",
            ["id", "platform", "platform_id", "pseudonym", "created_at"],
            (
                (annotator0 + a, "generic", f"{slug}-w{a}", f"ann-{slug}-{a}", now)
                for a in range(annotators)
            ),
        )
        item_index = np.repeat(np.arange(n_items), LABELS_PER_ITEM)
        start = rng.integers(0, annotators, n_items)
        annotator_index = (
            start[item_index] + np.tile(np.arange(LABELS_PER_ITEM), n_items)
        ) % annotators
        value = np.clip(
            np.rint(quality[item_index] + rng.normal(0, 1, item_index.size)), 1, 5
        ).astype(int)
        duration = rng.integers(2_000, 60_000, item_index.size)
        assignment_ids = [uuid.uuid4() for _ in range(item_index.size)]
        leased = [
            now - timedelta(seconds=int(s)) for s in rng.integers(60, 86_400, item_index.size)
        ]
        _copy(
            cursor,
            "annotation_assignment",
            ["id", "batch_id", "item_id", "annotator_id", "state", "leased_at", "expires_at", "submitted_at"],
            (
                (assignment_ids[k], batch.pk, item0 + int(item_index[k]), annotator0 + int(annotator_index[k]),
                 "submitted", leased[k], leased[k] + timedelta(minutes=10), leased[k] + timedelta(seconds=30))
                for k in range(item_index.size)
            ),
        )  # fmt: skip
        label0 = _next_id(cursor, "annotation_label")
        _copy(
            cursor,
            "annotation_label",
            ["id", "assignment_id", "batch_id", "item_id", "annotator_id", "kind", "value", "status",
             "duration_ms", "submitted_at"],
            (
                (label0 + k, assignment_ids[k], batch.pk, item0 + int(item_index[k]),
                 annotator0 + int(annotator_index[k]), "absolute", int(value[k]), "counted",
                 int(duration[k]), leased[k] + timedelta(seconds=30))
                for k in range(item_index.size)
            ),
        )  # fmt: skip
        score0 = _next_id(cursor, "analysis_score")
        rows = []
        for name, kind, noise in SOURCES:
            source, _ = ScoreSource.objects.get_or_create(name=name, defaults={"kind": kind})
            scores = quality + rng.normal(0, noise, n_items)
            rows.extend((source.pk, response0 + i, float(scores[i])) for i in range(n_items))
        _copy(
            cursor,
            "analysis_score",
            ["id", "source_id", "response_id", "value"],
            ((score0 + k, *row) for k, row in enumerate(rows)),
        )
        for table in ("annotation_query", "annotation_response", "annotation_item",
                      "annotation_annotator", "annotation_label", "analysis_score"):  # fmt: skip
            _reset_sequence(cursor, table)
    return batch


# The tables an analysis reads. COPY leaves them without planner statistics until
# autovacuum's ANALYZE comes by (never, where autovacuum is off): with none, PostgreSQL reads
# a batch's 650k labels through an index in random heap order (0.41 s) instead of one
# sequential scan (0.12 s). A database in use has its statistics, so the benchmark takes them
# before it measures.
ANALYSED_TABLES = (
    "annotation_query",
    "annotation_response",
    "annotation_item",
    "annotation_annotator",
    "annotation_assignment",
    "annotation_label",
    "analysis_score",
)


def analyse_tables() -> None:
    from django.db import connection

    with connection.cursor() as cursor:
        for table in ANALYSED_TABLES:
            cursor.execute(f"ANALYZE {table}")


def _seconds(function, *args, **kwargs) -> tuple[float, object]:
    started = time.perf_counter()
    result = function(*args, **kwargs)
    return time.perf_counter() - started, result


def measure(slug: str, resamples: int) -> dict:
    """The phases of one analysis of ``slug`` by this process's code (on ``sys.path``)."""
    from analysis.loading import load_batch, load_scores
    from analysis.reports import build_report
    from analysis.services.analyses import analyse_batch
    from annotation.models import Batch

    batch = Batch.objects.get(slug=slug)

    def load():
        try:  # the analysis's own loading (labels, items and scores at once)
            from analysis.loading import load_batch_and_scores
        except ImportError:  # code from before the items and scores loaded beside the labels
            arrays = load_batch(batch)
            return arrays, load_scores(batch, arrays)
        return load_batch_and_scores(batch)

    try:  # the report as the analysis job computes it (BLAS on one thread, core.blas)
        from core.blas import single_blas_thread as as_the_job_does
    except ImportError:  # code from before core.blas computed it as it came
        as_the_job_does = nullcontext

    kernel_s = None
    try:  # numba's import and the kernel's machine code (cached): once per process
        import analysis.stats.bootstrap_compiled  # noqa: F401
    except ImportError:  # code from before the kernel was compiled
        pass
    else:
        from analysis.stats import correlate_sources_subsets

        tiny = np.arange(12, dtype=np.float64)
        kernel_s, _ = _seconds(
            correlate_sources_subsets, [tiny], tiny[::-1].copy(), {"all": tiny >= 0}, 4
        )
    load_s, (arrays, sources) = _seconds(load)
    with as_the_job_does():
        core_s, _ = _seconds(build_report, arrays, sources, n_resamples=0)
        compute_s, report = _seconds(build_report, arrays, sources, n_resamples=resamples)
    whole_s, _ = _seconds(analyse_batch, batch, n_resamples=resamples)
    return {
        "size": {
            "items": arrays.n_items,
            "labels": int(arrays.value.size),
            "annotators": arrays.n_annotators,
            "sources": len(sources),
            "subsets": len(report["subsets"]),
            "categories": len(report["by_category"]),
            "correlations": len(report["correlations"]),
            "resamples": resamples,
        },
        "seconds": {
            "loading": load_s,
            "metric_core": core_s,
            "bootstrap": max(compute_s - core_s, 0.0),
            "report_with_bootstrap": compute_s,
            "whole_analysis": whole_s,
        },
        "compiled_kernel_load_once_s": kernel_s,
    }


PHASES = ["loading", "metric_core", "bootstrap", "report_with_bootstrap", "whole_analysis"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=1_000)
    parser.add_argument("--regenerate", action="store_true")
    parser.add_argument("--only", choices=list(SCALES), help="one batch only")
    parser.add_argument("--rounds", type=int, default=3, help="runs per version (best of)")
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="git ref, or none")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--code-root", help=argparse.SUPPRESS)
    parser.add_argument("--slug", help=argparse.SUPPRESS)
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", DEFAULT_URL)
    if args.measure:
        baseline.use_code_root(args.code_root)
        setup_django(url, migrate=False)
        print(json.dumps(measure(args.slug, args.resamples)))
        return
    if not url.startswith("postgres"):
        sys.exit("bench/analysis.py measures PostgreSQL: set DATABASE_URL=postgres://...")
    ensure_database(url)
    setup_django(url)
    from annotation.models import Batch

    earlier = None if args.baseline == "none" else baseline.code_tree(args.baseline)
    script = Path(__file__).resolve()
    results = []
    for slug, scale in SCALES.items():
        if args.only and slug != args.only:
            continue
        if args.regenerate or not Batch.objects.filter(slug=slug).exists():
            started = time.perf_counter()
            generate(slug, **scale)
            print(f"generated {slug} in {time.perf_counter() - started:.1f} s", flush=True)
        analyse_tables()
        options = ["--slug", slug, "--resamples", str(args.resamples)]
        runs: dict[str, list[dict]] = {"current": [], "baseline": []}
        for _ in range(args.rounds):
            if earlier is not None:
                runs["baseline"].append(baseline.run_measurement(script, earlier, options))
            runs["current"].append(baseline.run_measurement(script, REPO, options))
        current = baseline.best([run["seconds"] for run in runs["current"]])
        result = {
            "batch": slug,
            **runs["current"][-1]["size"],
            "seconds": {phase: round(current[phase], 3) for phase in PHASES},
            "compiled_kernel_load_once_s": _rounded_best(
                [run.get("compiled_kernel_load_once_s") for run in runs["current"]]
            ),
        }
        if earlier is not None:
            before = baseline.best([run["seconds"] for run in runs["baseline"]])
            result["baseline_seconds"] = {phase: round(before[phase], 3) for phase in PHASES}
            result["ratios_current_over_baseline"] = baseline.ratios(current, before)
        results.append(result)
        print(json.dumps(result, indent=2), flush=True)

    from analysis.stats import bootstrap

    run = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "baseline": None if earlier is None else baseline.resolve(args.baseline),
        "rounds": args.rounds,
        "machine": {
            "cpus": os.cpu_count(),
            "load_average_1min_at_end": round(os.getloadavg()[0], 2),
            "python": platform.python_version(),
            "numpy": np.__version__,
            "bootstrap_threads": bootstrap.BOOTSTRAP_THREADS,
        },
        "targets_seconds": {"bench-large whole analysis": 1.5},
        "results": results,
    }
    lines = [
        f"# Analysis benchmark ({run['when']}, {run['machine']['cpus']} CPUs, "
        f"load {run['machine']['load_average_1min_at_end']} at the end)",
        "",
        f"{args.resamples} bootstrap resamples; best of {args.rounds} runs per version, each "
        "in a fresh process, alternating"
        + (f"; baseline {run['baseline'][:12]}." if earlier is not None else "."),
        "",
        "| batch | phase | baseline s | current s | current / baseline |",
        "|---|---|---:|---:|---:|",
    ]
    for result in results:
        label = f"{result['batch']} ({result['items']:,} items, {result['labels']:,} labels)"
        for phase in PHASES:
            before = result.get("baseline_seconds", {}).get(phase)
            ratio = result.get("ratios_current_over_baseline", {}).get(phase)
            lines.append(
                f"| {label} | {phase.replace('_', ' ')} | "
                f"{'' if before is None else before} | {result['seconds'][phase]} | "
                f"{'' if ratio is None else ratio} |"
            )
    for result in results:
        if result.get("compiled_kernel_load_once_s") is not None:
            lines += [
                "",
                f"{result['batch']}: the bootstrap's compiled kernel took "
                f"{result['compiled_kernel_load_once_s']} s to load (numba and its cached "
                "machine code, once per process, before the phases above; the first "
                "compilation on a new machine takes about a second more).",
            ]
    baseline.write_results("analysis", run, lines)


def _rounded_best(values: list) -> float | None:
    known = [value for value in values if value is not None]
    return round(min(known), 3) if known else None


if __name__ == "__main__":
    main()
