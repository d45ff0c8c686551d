"""Leasing benchmark: how the cost of one lease + label grows with the batch's size.

For a small batch (30 items) and a study-sized one (26,070 items), both N = 25, it times
``lease_next_item`` and ``submit_label`` through the services on PostgreSQL on a fresh batch, once half of
the labels are in, and once 95 % of the items are full, and writes the per-call latencies
(median and 95th percentile) and the large/small ratio to ``bench/results/leasing.json``
and ``bench/results/leasing.md``. The leasing query should not grow with the batch.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_leasing .venv/bin/python bench/leasing.py
"""

from __future__ import annotations

import json
import os
import statistics
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.analysis import ensure_database, setup_django  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/bench_leasing"
RESULTS = REPO / "bench" / "results"
SIZES = {"small": 30, "large": 26_070}
N = 25
CALLS = 150


def make_batch(slug: str, n_items: int):
    from annotation.models import Batch, Item, Query, Response
    from annotation.services.batches import change_state, create_batch

    Batch.objects.filter(slug=slug).update(state="closed")
    batch = create_batch(slug=f"{slug}-{int(time.time())}", kind="absolute", annotations_per_item=N)
    query = Query.objects.create(query_id=f"{batch.slug}-q", text="Prompt")
    responses = Response.objects.bulk_create(
        [
            Response(response_id=f"{batch.slug}-r{i}", query=query, text=f"Answer {i}")
            for i in range(n_items)
        ],
        batch_size=5000,
    )
    Item.objects.bulk_create(
        [
            Item(batch=batch, item_id=f"i{i}", position=i, query=query, response=r, target=N)
            for i, r in enumerate(responses)
        ],
        batch_size=5000,
    )
    return change_state(batch, "live")


def fill(batch, per_item: int) -> None:
    """Give every untouched item ``per_item`` counted labels, in bulk, counters consistent."""
    import uuid

    from django.db import transaction
    from django.db.models import F
    from django.utils import timezone

    from annotation.models import Annotator, Assignment, Item, Label, Participation

    now = timezone.now()
    untouched = Item.objects.filter(batch=batch, reserved_count=0)
    items = list(untouched.order_by("position").values_list("pk", flat=True))
    annotators = Annotator.objects.bulk_create(
        [Annotator(platform="generic", platform_id=f"{batch.slug}-fill-{a}", pseudonym=f"f-{uuid.uuid4().hex[:12]}") for a in range(per_item)]
    )  # fmt: skip
    Participation.objects.bulk_create([Participation(batch=batch, annotator=a) for a in annotators])
    # The deferred foreign-key checks at COMMIT are planned from the tables' statistics;
    # fresh tables look empty to the planner (a sequential scan per check, minutes for
    # 300k rows), so the statistics are refreshed inside each transaction before it ends.
    for annotator in annotators:
        with transaction.atomic():
            assignments = Assignment.objects.bulk_create(
                [Assignment(batch=batch, item_id=pk, annotator=annotator, state="submitted",
                            leased_at=now, expires_at=now, submitted_at=now) for pk in items],
                batch_size=5000,
            )  # fmt: skip
            Label.objects.bulk_create(
                [Label(assignment=a, batch=batch, item_id=a.item_id, annotator=annotator, kind="absolute",
                       value=3, status="counted", submitted_at=now) for a in assignments],
                batch_size=5000,
            )  # fmt: skip
            analyse_tables()
            Item.objects.filter(pk__in=items).update(
                counted_count=F("counted_count") + 1, reserved_count=F("reserved_count") + 1
            )


def analyse_tables() -> None:
    """Refresh the planner's statistics after a bulk fill, as autovacuum would in time."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("ANALYZE annotation_item, annotation_assignment, annotation_label")


def mark_full(batch, share: float) -> None:
    """Late in a study most items are full. Only the counters matter to the leasing query,
    so this sets them directly (no label rows) for the first ``share`` of the items."""
    from django.db.models import F

    from annotation.models import Item

    items = Item.objects.filter(batch=batch).order_by("position").values_list("pk", flat=True)
    count = int(items.count() * share)
    Item.objects.filter(pk__in=list(items[:count])).update(
        reserved_count=F("target"), counted_count=F("target")
    )


def time_calls(batch, calls: int) -> dict:
    from annotation.services.annotators import identify_annotator, join_batch
    from annotation.services.labelling import submit_label
    from annotation.services.leasing import lease_next_item

    lease_s, submit_s = [], []
    for k in range(calls):
        annotator = identify_annotator("generic", f"{batch.slug}-bench-{k}-{time.time_ns()}")
        participation = join_batch(batch, annotator)
        start = time.perf_counter()
        outcome = lease_next_item(batch, participation)
        lease_s.append(time.perf_counter() - start)
        if outcome.assignment is None:  # the small batch drains before CALLS calls
            break
        start = time.perf_counter()
        submit_label(annotator, outcome.assignment.pk, 4, 1000)
        submit_s.append(time.perf_counter() - start)

    def summary(values):
        values = sorted(values)
        return {
            "median_ms": round(statistics.median(values) * 1000, 2),
            "p95_ms": round(values[int(len(values) * 0.95)] * 1000, 2),
        }

    return {"calls": len(lease_s), "lease": summary(lease_s), "submit": summary(submit_s)}


def main() -> None:
    url = os.environ.get("DATABASE_URL", DEFAULT_URL)
    if not url.startswith("postgres"):
        sys.exit("bench/leasing.py measures PostgreSQL: set DATABASE_URL=postgres://...")
    ensure_database(url)
    setup_django(url)
    results = {}
    for name, n_items in SIZES.items():
        batch = make_batch(f"lease-{name}", n_items)
        analyse_tables()  # as import_items does after a big import
        fresh = time_calls(batch, CALLS)
        fill(batch, N // 2)
        analyse_tables()
        half = time_calls(batch, CALLS)
        mark_full(batch, share=0.95)
        analyse_tables()
        nearly = time_calls(batch, CALLS)
        results[name] = {
            "items": n_items,
            "fresh": fresh,
            "half_full": half,
            "95pct_items_full": nearly,
        }
        print(name, json.dumps(results[name]), flush=True)
    ratio = {
        stage: round(
            results["large"][stage]["lease"]["median_ms"]
            / results["small"][stage]["lease"]["median_ms"],
            2,
        )
        for stage in ("fresh", "half_full", "95pct_items_full")
    }
    run = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "calls_per_measure": CALLS,
        "annotations_per_item": N,
        "results": results,
        "lease_median_ratio_large_over_small": ratio,
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "leasing.json").write_text(json.dumps(run, indent=2) + "\n")
    lines = [
        f"# Leasing benchmark ({run['when']}, load {run['load_average_1min']})",
        "",
        "| batch | items | state | lease median ms | lease p95 ms | submit median ms | submit p95 ms |",
        "|---|---|---|---|---|---|---|",
    ]
    for name, result in results.items():
        for stage in ("fresh", "half_full", "95pct_items_full"):
            timing = result[stage]
            lines.append(
                f"| {name} | {result['items']:,} | {stage} | {timing['lease']['median_ms']} | "
                f"{timing['lease']['p95_ms']} | {timing['submit']['median_ms']} | {timing['submit']['p95_ms']} |"
            )
    lines += ["", f"lease median, large / small: {ratio}"]
    (RESULTS / "leasing.md").write_text("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
