"""Time the core of the analysis on a study-sized synthetic absolute batch.

26,070 items x 25 labels (651,750 labels from 2,300 annotators) and 6 score sources, 1,000
bootstrap resamples: count_matrix, item_summary, every subset, the bootstrap of every source
and subset, plus the batch agreement and per-annotator figures for reference. The bootstrap is
the production path, ``analysis.stats.correlate_sources_subsets`` as ``analysis.reports`` runs
it, timed twice (best of ``--repeat``): one source on the full set (the budget: 26,070 items x
1,000 resamples in a couple of seconds) and all sources on all subsets. Prints wall-clock and
CPU seconds per stage (CPU time sums over the bootstrap threads) and the 1-minute load average,
since other work on the machine inflates wall time; ``--json PATH`` also writes them.

    .venv/bin/python bench/analysis_core.py [--items 26070] [--resamples 1000] [--repeat 1]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from analysis import stats  # noqa: E402
from analysis.stats import bootstrap  # noqa: E402


def synthetic_batch(n_items: int, labels_per_item: int, n_annotators: int, seed: int) -> dict:
    rng = np.random.default_rng(seed)
    quality = rng.uniform(1, 5, n_items)
    item_index = np.repeat(np.arange(n_items), labels_per_item)
    # distinct annotators within an item: consecutive ids from a random start
    start = rng.integers(0, n_annotators, n_items)
    annotator_index = (start[item_index] + np.tile(np.arange(labels_per_item), n_items)) % (
        n_annotators
    )
    value = np.clip(np.rint(quality[item_index] + rng.normal(0, 1, item_index.size)), 1, 5)
    sources = {
        f"source_{i}": quality + rng.normal(0, noise, n_items)
        for i, noise in enumerate((0.3, 0.6, 1.0, 1.5, 2.5, 4.0))
    }
    return {
        "item_index": item_index,
        "annotator_index": annotator_index,
        "value": value.astype(np.int64),
        "sources": sources,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--items", type=int, default=26_070)
    parser.add_argument("--labels-per-item", type=int, default=25)
    parser.add_argument("--annotators", type=int, default=2_300)
    parser.add_argument("--resamples", type=int, default=1_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--repeat", type=int, default=1, help="bootstrap runs per stage (best)")
    parser.add_argument("--json", type=Path, help="also write the timings here")
    args = parser.parse_args()

    batch = synthetic_batch(args.items, args.labels_per_item, args.annotators, args.seed)
    labels = stats.ABSOLUTE_LABELS
    timings: dict[str, float] = {}
    cpu_timings: dict[str, float] = {}

    def timed(stage: str, func, *func_args, **kwargs):
        start, cpu_start = time.perf_counter(), time.process_time()
        result = func(*func_args, **kwargs)
        wall, cpu = time.perf_counter() - start, time.process_time() - cpu_start
        if stage not in timings or wall < timings[stage]:
            timings[stage], cpu_timings[stage] = wall, cpu
        return result

    counts = timed(
        "count_matrix",
        stats.count_matrix,
        batch["item_index"],
        batch["value"],
        labels,
        args.items,
    )
    summary = timed("item_summary", stats.item_summary, counts, labels)
    subsets = timed("subsets", stats.batch_subsets, False, summary)

    scores = list(batch["sources"].values())

    def one_source_full_set() -> list[dict]:
        return stats.correlate_sources_subsets(
            scores[:1],
            summary["mean"],
            {"full": subsets["full"]},
            n_resamples=args.resamples,
            seed=args.seed,
        )

    def all_sources_all_subsets() -> list[dict]:
        return stats.correlate_sources_subsets(
            scores, summary["mean"], subsets, n_resamples=args.resamples, seed=args.seed
        )

    one_stage, all_stage = "bootstrap_one_source_full_set", "bootstrap_all_sources_subsets"
    for _ in range(args.repeat):
        [one] = timed(one_stage, one_source_full_set)
        results = timed(all_stage, all_sources_all_subsets)
    if one["full"].spearman.ci95 is None or one["full"].pearson.ci95 is None:
        sys.exit("the one-source bootstrap gave no interval: the timing measured no bootstrap")
    n_correlations = sum(len(by_subset) for by_subset in results)
    core_stages = ("count_matrix", "item_summary", "subsets", all_stage)
    timings["core_total"] = sum(timings[stage] for stage in core_stages)
    cpu_timings["core_total"] = sum(cpu_timings[stage] for stage in core_stages)

    timed(
        "agreement_summary",
        stats.agreement_summary,
        batch["item_index"],
        batch["annotator_index"],
        batch["value"],
        labels,
        args.items,
    )
    timed(
        "annotator_crowd_agreement",
        stats.annotator_crowd_agreement,
        batch["item_index"],
        batch["annotator_index"],
        batch["value"],
        args.items,
        args.annotators,
    )

    subset_sizes = {name: int(mask.sum()) for name, mask in subsets.items()}
    report = {
        "items": args.items,
        "labels": int(batch["value"].size),
        "sources": len(batch["sources"]),
        "subsets": len(subsets),
        "items_in_all_subsets": sum(subset_sizes.values()),
        "distinct_subsets": len({mask.tobytes() for mask in subsets.values()}),
        "subset_sizes": subset_sizes,
        "correlations": n_correlations,
        "distinct_item_sets_of_sources": len(
            {
                np.packbits(mask & np.isfinite(x)).tobytes()
                for mask in subsets.values()
                for x in scores
            }
        ),
        "resamples": args.resamples,
        "bootstrap_threads": bootstrap.BOOTSTRAP_THREADS,
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "load_average_1min": round(os.getloadavg()[0], 2),
        "repeat": args.repeat,
        "seconds": {stage: round(seconds, 3) for stage, seconds in timings.items()},
        "cpu_seconds": {stage: round(seconds, 3) for stage, seconds in cpu_timings.items()},
    }
    for key, entry in report.items():
        if key not in ("seconds", "cpu_seconds"):
            print(f"{key:>29}: {entry}")
    print(f"{'stage':>29}  {'wall s':>8}  {'cpu s':>8}")
    for stage, seconds in timings.items():
        print(f"{stage:>29}: {seconds:8.3f}  {cpu_timings[stage]:8.3f}")
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()
