"""Exports stream: peak memory does not grow with the number of labels.

The test writes 200,000 counted labels (8,000 items x N = 25, 1,000 annotators) straight
into the database with bulk inserts (the services would take minutes; the counters are set
as the services would leave them), commits them (``transaction=True``), and runs the
exports in a fresh Python process on the same test database: this module run as a script
(``python -m tests.annotation.test_export_memory``), which calls ``django.setup()`` with
the same settings and only the database NAME switched to the test database.

In that process, each export's peak RSS growth is measured: the kernel's peak counter
(``VmHWM``) is reset through ``/proc/self/clear_refs`` before the export and read after it,
against ``VmRSS`` before it (where ``clear_refs`` is not available: the growth of
``ru_maxrss``, after warming up on a small batch). Every export is first run once on a
2,000-label batch, so imports, caches and memory pools are warm and the figure is what the
200,000 labels add. As a control, a bytes object of twice the bound is measured too: the
probe must report it, or it would not be detecting anything. (For scale: holding all
200,000 long rows in a list, as a non-streaming export would, measured +140 MB.)

Figures are printed and written to ``test-artifacts/export_memory.txt`` (one line per
database backend). Run: ``pytest tests/annotation/test_export_memory.py -s`` (SQLite) or
with ``DATABASE_URL=postgres://...``.
"""

import gc
import json
import os
import resource
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

BASE_DIR = Path(__file__).resolve().parents[2]
# Figures go with the test run (untracked), not into the repository.
RESULTS_FILE = BASE_DIR / "test-artifacts" / "export_memory.txt"

N_ITEMS = 8_000
PER_ITEM = 25
N_ANNOTATORS = 1_000
N_LABELS = N_ITEMS * PER_ITEM  # 200,000
SMALL_ITEMS = 80  # 2,000 labels: the warm-up batch
BOUND_MB = 60.0
INSERT_BATCH = 5_000

# (layout, format) measured on the large batch
EXPORTS = [
    ("long", "jsonl"),
    ("long", "csv"),
    ("long", "parquet"),
    ("dense", "jsonl"),
    ("dense", "parquet"),
]


# --------------------------------------------------------------------------------------
# Test data, inserted in bulk
# --------------------------------------------------------------------------------------


def _insert(model, columns: list[str], rows: list[tuple]) -> None:
    """Rows straight into the model's table in one transaction (PostgreSQL: COPY;
    SQLite: executemany with foreign-key checks off, the keys being built from the
    parent rows just inserted). ``rows`` hold values in database form (``_db_forms``)."""
    from django.db import connection, transaction

    table = connection.ops.quote_name(model._meta.db_table)
    names = ", ".join(
        connection.ops.quote_name(model._meta.get_field(name).column) for name in columns
    )
    if connection.vendor == "postgresql":
        with transaction.atomic(), connection.cursor() as cursor:
            with cursor.cursor.copy(f"COPY {table} ({names}) FROM STDIN") as copy:
                for row in rows:
                    copy.write_row(row)
        return
    sql = f"INSERT INTO {table} ({names}) VALUES ({', '.join(['%s'] * len(columns))})"
    with connection.constraint_checks_disabled():
        with transaction.atomic(), connection.cursor() as cursor:
            for start in range(0, len(rows), INSERT_BATCH):
                cursor.executemany(sql, rows[start : start + INSERT_BATCH])


def _db_forms():
    """(uuid, datetime) -> their database forms, as Django's fields would store them
    (computed here once per value: the fields' own per-value preparation is slow)."""
    from django.db import connection

    native_uuid = connection.features.has_native_uuid_field
    return (
        (lambda value: value) if native_uuid else (lambda value: value.hex),
        connection.ops.adapt_datetimefield_value,
    )


def make_large_batch(slug: str, n_items: int, per_item: int = PER_ITEM):
    """A live absolute batch with ``n_items`` complete items of ``per_item`` counted labels,
    as the services would leave it (counters, submitted assignments, participations)."""
    from annotation.models import (
        Annotator,
        Assignment,
        Batch,
        Item,
        Label,
        Participation,
        Query,
        Response,
    )

    now = datetime(2026, 1, 1, tzinfo=UTC)
    batch = Batch.objects.create(
        slug=slug,
        title=f"Memory test {slug}",
        kind="absolute",
        annotations_per_item=per_item,
        state="live",
        published_at=now,
    )
    n_queries = max(n_items // 20, 1)
    Query.objects.bulk_create(
        Query(
            query_id=f"{slug}-q{index}",
            text=f"=Question {index}: " + "explain the trade-offs in detail. " * 4,
            category="Creative Content Generation",
        )
        for index in range(n_queries)
    )
    queries = dict(
        Query.objects.filter(query_id__startswith=f"{slug}-q").values_list("query_id", "pk")
    )
    Response.objects.bulk_create(
        (
            Response(
                response_id=f"{slug}-r{index}",
                query_id=queries[f"{slug}-q{index % n_queries}"],
                model=f"model-{index % 7}",
                text=f"Response {index}. " + "A careful answer with several sentences. " * 10,
            )
            for index in range(n_items)
        ),
        batch_size=INSERT_BATCH,
    )
    responses = dict(
        Response.objects.filter(response_id__startswith=f"{slug}-r").values_list(
            "response_id", "pk"
        )
    )
    Item.objects.bulk_create(
        (
            Item(
                batch=batch,
                item_id=f"item-{index:05d}",
                position=index,
                query_id=queries[f"{slug}-q{index % n_queries}"],
                response_id=responses[f"{slug}-r{index}"],
                target=per_item,
                reserved_count=per_item,
                counted_count=per_item,
            )
            for index in range(n_items)
        ),
        batch_size=INSERT_BATCH,
    )
    item_pks = list(batch.items.order_by("position").values_list("pk", flat=True))
    Annotator.objects.bulk_create(
        (
            Annotator(
                platform="generic",
                platform_id=f"{slug}-w{index}",
                pseudonym=f"ann-{slug}-{index:04d}",
            )
            for index in range(N_ANNOTATORS)
        ),
        batch_size=INSERT_BATCH,
    )
    annotator_pks = list(
        Annotator.objects.filter(platform_id__startswith=f"{slug}-w")
        .order_by("pseudonym")
        .values_list("pk", flat=True)
    )
    Participation.objects.bulk_create(
        (Participation(batch=batch, annotator_id=pk) for pk in annotator_pks),
        batch_size=INSERT_BATCH,
    )
    step = N_ANNOTATORS // per_item  # per item, per_item distinct annotators

    # Increasing assignment ids: appending to the primary-key index is far faster than
    # inserting 200,000 random uuid4 keys.
    prefix = uuid.uuid4().int >> 64 << 64

    def cells():
        for index, item_pk in enumerate(item_pks):
            for slot in range(per_item):
                moment = now + timedelta(seconds=index * per_item + slot)
                yield (
                    uuid.UUID(int=prefix + index * per_item + slot),
                    item_pk,
                    annotator_pks[(index + slot * step) % N_ANNOTATORS],
                    moment,
                    (index * 7 + slot * 3) % 5 + 1,
                )

    uuid_form, time_form = _db_forms()
    assignments, labels = [], []
    for assignment_id, item_pk, annotator_pk, moment, value in cells():
        key, when = uuid_form(assignment_id), time_form(moment)
        assignments.append((key, batch.pk, item_pk, annotator_pk, "submitted", when, when, when))
        labels.append(
            (key, batch.pk, item_pk, annotator_pk, "absolute", value, "counted", 500 + value * 100,
             when)
        )  # fmt: skip
    _insert(
        Assignment,
        ["id", "batch", "item", "annotator", "state", "leased_at", "expires_at", "submitted_at"],
        assignments,
    )
    del assignments
    _insert(
        Label,
        ["assignment", "batch", "item", "annotator", "kind", "value", "status", "duration_ms",
         "submitted_at"],
        labels,
    )  # fmt: skip
    from django.db import connection

    if connection.vendor == "postgresql":  # as autovacuum would after a bulk load
        with connection.cursor() as cursor:
            for model in (Item, Annotator, Assignment, Label):
                cursor.execute(f"ANALYZE {connection.ops.quote_name(model._meta.db_table)}")
    return batch


# --------------------------------------------------------------------------------------
# The probe: runs in a fresh process (this module as a script)
# --------------------------------------------------------------------------------------


def _status_kb(key: str) -> int:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(key + ":"):
                return int(line.split()[1])
    raise KeyError(key)


def _reset_peak() -> bool:
    try:
        with open("/proc/self/clear_refs", "w") as clear:
            clear.write("5")  # resets VmHWM to the current RSS (Linux >= 4.0)
        return True
    except OSError:
        return False


def _maxrss_kb() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux


def _measure(run) -> tuple[object, float, float]:
    """(result, peak growth in MB, seconds) of ``run()``."""
    gc.collect()
    if _reset_peak():
        before = _status_kb("VmRSS")
        started = time.monotonic()
        result = run()
        peak = _status_kb("VmHWM")
    else:
        before = _maxrss_kb()
        started = time.monotonic()
        result = run()
        peak = _maxrss_kb()
    return result, max(peak - before, 0) / 1024, time.monotonic() - started


def probe(small_slug: str, big_slug: str, out_dir: str) -> dict:
    from annotation.models import Batch
    from annotation.services.exports import delivery

    small = Batch.objects.get(slug=small_slug)
    big = Batch.objects.get(slug=big_slug)
    method = "VmHWM reset via /proc/self/clear_refs" if _reset_peak() else "ru_maxrss growth"

    def target(batch, layout, fmt):
        if fmt == "parquet":
            return os.path.join(out_dir, f"{batch.slug}-{layout}.parquet")
        return os.devnull

    for layout, fmt in EXPORTS:  # warm-up: imports, caches, memory pools
        delivery.export_to_file(small, layout, fmt, target(small, layout, fmt))
    baseline_mb = _status_kb("VmRSS") / 1024
    figures = []
    for layout, fmt in EXPORTS:
        rows, growth, seconds = _measure(
            lambda layout=layout, fmt=fmt: delivery.export_to_file(
                big, layout, fmt, target(big, layout, fmt)
            )
        )
        figures.append(
            {"layout": layout, "format": fmt, "rows": rows, "peak_growth_mb": round(growth, 1),
             "seconds": round(seconds, 2), "file": target(big, layout, fmt)}
        )  # fmt: skip
    # Control: the probe must see memory that is really used. Touch twice the bound.
    _, control, _ = _measure(lambda: len(b"\x01" * int(2 * BOUND_MB * 2**20)))
    return {
        "method": method,
        "baseline_rss_mb": round(baseline_mb, 1),
        "peak_rss_mb": round(_maxrss_kb() / 1024, 1),
        "exports": figures,
        "control_mb": round(control, 1),
    }


def main() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    from django.conf import settings

    settings.DATABASES["default"]["NAME"] = os.environ["EXPORT_PROBE_DB_NAME"]
    import django

    django.setup()
    import pyarrow.parquet  # noqa: F401  (imported before measuring, as in a worker)

    small_slug, big_slug, out_dir = sys.argv[1:4]
    print(json.dumps(probe(small_slug, big_slug, out_dir)))


# --------------------------------------------------------------------------------------
# The test
# --------------------------------------------------------------------------------------


def _write_results(vendor: str, line: str) -> None:
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    lines = RESULTS_FILE.read_text().splitlines() if RESULTS_FILE.exists() else []
    lines = [kept for kept in lines if not kept.startswith(f"{vendor}:")] + [line]
    RESULTS_FILE.write_text("\n".join(sorted(lines)) + "\n")


@pytest.mark.slow
@pytest.mark.both_databases  # SQLite streams through its own path
@pytest.mark.django_db(transaction=True)
def test_export_memory_does_not_grow_with_labels(tmp_path):
    import pyarrow.parquet as pq
    from django.db import connection

    from annotation.models import Label

    started = time.monotonic()
    make_large_batch("mem-small", SMALL_ITEMS)
    make_large_batch("mem-big", N_ITEMS)
    assert Label.objects.filter(batch__slug="mem-big", status="counted").count() == N_LABELS
    insert_seconds = time.monotonic() - started

    env = dict(os.environ, EXPORT_PROBE_DB_NAME=str(connection.settings_dict["NAME"]))
    done = subprocess.run(
        [sys.executable, "-m", "tests.annotation.test_export_memory", "mem-small", "mem-big",
         str(tmp_path)],
        cwd=BASE_DIR, env=env, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    report = json.loads(done.stdout.strip().splitlines()[-1])

    expected_rows = {"long": N_LABELS, "dense": N_ITEMS}
    for figure in report["exports"]:
        assert figure["rows"] == expected_rows[figure["layout"]], figure
        if figure["format"] == "parquet":
            metadata = pq.read_metadata(figure["file"])
            assert metadata.num_rows == figure["rows"]
            if figure["layout"] == "long":
                assert metadata.num_row_groups > 1  # written in row groups, not at once

    vendor = connection.vendor
    parts = ", ".join(
        f"{f['layout']}/{f['format']} +{f['peak_growth_mb']} MB ({f['seconds']} s)"
        for f in report["exports"]
    )
    line = (
        f"{vendor}: peak RSS growth exporting {N_LABELS:,} labels ({N_ITEMS:,} items x "
        f"N={PER_ITEM}, {N_ANNOTATORS:,} annotators): {parts}; bound {BOUND_MB:.0f} MB; "
        f"control ({2 * BOUND_MB:.0f} MB bytes object) +{report['control_mb']} MB; "
        f"probe baseline RSS {report['baseline_rss_mb']} MB, peak {report['peak_rss_mb']} MB; "
        f"{report['method']}; data inserted in {insert_seconds:.1f} s; "
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC"
    )
    print("\n" + line)
    _write_results(vendor, line)

    for figure in report["exports"]:
        assert figure["peak_growth_mb"] < BOUND_MB, figure
    assert report["control_mb"] > 1.5 * BOUND_MB, "the probe does not see memory growth"


if __name__ == "__main__":
    main()
