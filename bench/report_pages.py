"""Report pages benchmark on PostgreSQL: "Download figures" and the first view of the census
and Genie pages, the current code against a baseline commit in the same run.

Subjects, prepared once by the current code (``--regenerate`` redoes them): the demo batches
(``load_demo``) rated by simulated people (``simulate_crowd``) and analysed; the analysis
benchmark's batches ``bench-study`` (750 items x 25 labels) and ``bench-large`` (26,070 x 25),
with 6 score sources, analysed with 1,000 resamples; the demo census; a Genie set of the
tests' native example. Then, alternately in fresh processes, each version answers, for each
batch, ``GET /manage/<slug>/report/figures.zip`` (as a researcher, through Django's test
client: the whole view, no network) and, for the census and the Genie set, the page's first
view (the cache emptied first). Best of ``--rounds`` per figure; the ratios are current over
baseline. Writes ``bench/results/report_pages.json`` and ``.md``.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_analysis \\
        .venv/bin/python bench/report_pages.py [--baseline c658f9a] [--rounds 3]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench import baseline  # noqa: E402

DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/bench_analysis"
DEFAULT_BASELINE = "c658f9a"  # main before the report's figures were stored
DEMO_BATCHES = ["demo-absolute", "demo-pairwise"]
BENCH_BATCHES = ["bench-study", "bench-large"]
GENIE_SET = "bench-genie"
CENSUS = "one-word-census"


def setup_django() -> None:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    import django

    django.setup()
    from django.conf import settings

    settings.ALLOWED_HOSTS = ["*"]


# --------------------------------------------------------------------------- subjects


def prepare(regenerate: bool) -> None:
    """Everything the measurement reads, made by the current code."""
    from django.core.management import call_command

    from annotation.models import Batch, Label
    from bench.analysis import SCALES, generate
    from core.jobs.queue import run_now
    from diversity.census.models import Census
    from diversity.census.services.analyses import analyse_now as analyse_census
    from diversity.census.services.analyses import analysis_params as census_params
    from diversity.genie.models import GenieSet
    from diversity.genie.services.analyses import analyse_now as analyse_genie
    from diversity.genie.services.analyses import analysis_params as genie_params
    from diversity.genie.services.imports import import_genie
    from tests.diversity import genie_native_set

    call_command("migrate", verbosity=0)
    with open(os.devnull, "w") as quiet:
        call_command("load_demo", stdout=quiet)
    for slug in DEMO_BATCHES:
        batch = Batch.objects.get(slug=slug)
        if not Label.objects.filter(batch=batch).exists():
            call_command("simulate_crowd", slug, stdout=io.StringIO())
    for slug in BENCH_BATCHES:
        if regenerate or not Batch.objects.filter(slug=slug).exists():
            generate(slug, **SCALES[slug])
    for slug in DEMO_BATCHES + BENCH_BATCHES:
        batch = Batch.objects.get(slug=slug)
        if regenerate or not batch.jobs.filter(kind="analysis", state="succeeded").exists():
            started = time.perf_counter()
            run_now("analysis", batch, {"bootstrap": 1000, "seed": 0})
            print(f"analysed {slug} in {time.perf_counter() - started:.1f} s", flush=True)
    census = Census.objects.get(name=CENSUS)
    analyse_census(census, census_params(bootstrap=2000))
    if not GenieSet.objects.filter(name=GENIE_SET).exists():
        records = genie_native_set.jsonl(genie_native_set.rows()).encode()
        import_genie(GENIE_SET, io.BytesIO(records), filename="judgments.jsonl")
    analyse_genie(GenieSet.objects.get(name=GENIE_SET), genie_params(bootstrap=1000))


# --------------------------------------------------------------------------- measuring


def measure() -> dict:
    """Seconds per request of this process's code (the version on ``sys.path``)."""
    from django.contrib.auth.models import Group, User
    from django.core.cache import cache
    from django.test import Client

    user, _ = User.objects.get_or_create(username="bench-researcher", is_staff=True)
    user.groups.add(Group.objects.get(name="researcher"))
    client = Client()
    client.force_login(user)

    def timed(url: str) -> float:
        started = time.perf_counter()
        response = client.get(url)
        body = b"".join(response.streaming_content) if response.streaming else response.content
        seconds = time.perf_counter() - started
        if response.status_code != 200 or not body:
            raise SystemExit(f"{url}: HTTP {response.status_code}")
        return seconds

    client.get(f"/manage/census/{CENSUS}/")  # imports and first queries, not measured
    seconds = {}
    for slug in DEMO_BATCHES + BENCH_BATCHES:
        seconds[f"figures.zip {slug}"] = timed(f"/manage/{slug}/report/figures.zip")
    for name, url in (("census", f"/manage/census/{CENSUS}/"), ("genie", f"/manage/genie/{GENIE_SET}/")):  # fmt: skip
        cache.clear()
        seconds[f"first view {name}"] = timed(url)
    return seconds


# --------------------------------------------------------------------------- the run


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="git ref to compare with")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--regenerate", action="store_true")
    parser.add_argument("--measure", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--code-root", help=argparse.SUPPRESS)
    args = parser.parse_args()
    os.environ.setdefault("DATABASE_URL", DEFAULT_URL)
    os.environ.setdefault("DATA_DIR", str(REPO / "data" / "bench"))
    if args.measure:
        baseline.use_code_root(args.code_root)
        setup_django()
        print(json.dumps(measure()))
        return
    if not os.environ["DATABASE_URL"].startswith("postgres"):
        sys.exit("bench/report_pages.py measures PostgreSQL: set DATABASE_URL=postgres://...")
    from bench.analysis import ensure_database

    ensure_database(os.environ["DATABASE_URL"])
    setup_django()
    prepare(args.regenerate)
    earlier = baseline.code_tree(args.baseline)
    script = Path(__file__).resolve()
    runs: dict[str, list[dict]] = {"current": [], "baseline": []}
    for number in range(args.rounds):
        runs["baseline"].append(baseline.run_measurement(script, earlier, []))
        runs["current"].append(baseline.run_measurement(script, REPO, []))
        print(f"round {number + 1}: {json.dumps(runs['current'][-1])}", flush=True)
    current, before = baseline.best(runs["current"]), baseline.best(runs["baseline"])
    run = {
        "when": datetime.now(UTC).isoformat(timespec="seconds"),
        "baseline": baseline.resolve(args.baseline),
        "machine": {"cpus": os.cpu_count(), "load_average_1min_at_end": os.getloadavg()[0]},
        "rounds": args.rounds,
        "targets_seconds": {"figures.zip": 2.0, "first view": 0.5},
        "seconds": {"current": current, "baseline": before},
        "ratios_current_over_baseline": baseline.ratios(current, before),
    }
    lines = [
        f"# Report pages benchmark ({run['when']}, {run['machine']['cpus']} CPUs, "
        f"load {run['machine']['load_average_1min_at_end']:.2f} at the end)",
        "",
        f"Baseline: {run['baseline'][:12]}; best of {args.rounds} rounds, each version in a "
        "fresh process, alternating.",
        "",
        "| request | baseline s | current s | current / baseline |",
        "|---|---:|---:|---:|",
    ]
    for name, seconds in current.items():
        lines.append(
            f"| {name} | {before[name]:.3f} | {seconds:.3f} | "
            f"{run['ratios_current_over_baseline'][name]:.3f} |"
        )
    baseline.write_results("report_pages", run, lines)


if __name__ == "__main__":
    main()
