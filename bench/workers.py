"""Corpus jobs on 1 and 2 Celery worker processes, side by side in one run, for
``bench/embedding.py --workers`` and ``bench/diversity.py --workers``.

Each worker is its own ``celery worker --pool solo`` process (as on separate machines),
with ``EMBEDDING_THREADS=1``: one core each, in a session of its own. Linux's scheduler
(``kernel.sched_autogroup_enabled``) gives all the processes of one session one share of
a busy machine, so two workers started in the bench's session would share one worker's
CPU; separate services (containers, systemd units, machines) are separate groups too. Every worker count gets a queue of its own and
its workers are started once, before the runs, and kept; the runs then alternate between
the counts (1, 2, 1, 2, ...) so that a change in the machine's load hits both alike, and
the best of ``repeat`` is kept for each. A run is timed from ``start_job`` until the job
has succeeded (polled every 50 ms), as a user would wait for it; each part's own time
(``JobChunk.seconds``) gives the cost of one part on one core.

Needs PostgreSQL (``DATABASE_URL``; created and migrated if missing) and Redis
(``--redis``, a database of its own: the queues are made up per run).
"""

from __future__ import annotations

import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from bench.analysis import ensure_database, setup_django  # noqa: E402

STUDY_RESPONSES = 2_600_000


def setup(database_url: str, redis_url: str) -> Path:
    """Django on the bench database, jobs sent to Redis, files in a new folder; the folder."""
    data_dir = Path(tempfile.mkdtemp(prefix="bench-workers-"))
    os.environ["DATA_DIR"] = str(data_dir)
    os.environ["REDIS_URL"] = redis_url
    ensure_database(database_url)
    setup_django(database_url)
    return data_dir


class WorkerProcesses:
    """``count`` solo Celery workers on a queue of their own."""

    def __init__(self, count: int, data_dir: Path, environment: dict | None = None):
        self.count = count
        self.queue = f"bench-{count}w-{uuid.uuid4().hex[:6]}"
        self.logs = [data_dir / f"{self.queue}-{i}.log" for i in range(count)]
        env = {
            **os.environ,
            "CELERY_DEFAULT_QUEUE": self.queue,
            "EMBEDDING_THREADS": "1",
            "OMP_NUM_THREADS": "1",
            **(environment or {}),
        }
        self.processes = [
            subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "celery",
                    "-A",
                    "config",
                    "worker",
                    "--pool",
                    "solo",
                    "--queues",
                    self.queue,
                    "--hostname",
                    f"w{i}-{self.queue}@%h",
                    "--loglevel",
                    "WARNING",
                    "--without-heartbeat",
                    "--without-gossip",
                    "--without-mingle",
                ],
                cwd=REPO,
                env=env,
                stdout=open(log, "w"),
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )  # fmt: skip
            for i, log in enumerate(self.logs)
        ]

    def wait_ready(self, timeout: float = 60) -> None:
        from config.celery import app

        deadline = time.monotonic() + timeout
        names = {f"w{i}-{self.queue}" for i in range(self.count)}
        while time.monotonic() < deadline:
            answered = app.control.ping(timeout=1.0) or []
            seen = {name.split("@")[0] for reply in answered for name in reply}
            if names <= seen:
                return
            for process, log in zip(self.processes, self.logs, strict=True):
                if process.poll() is not None:
                    raise SystemExit(f"a worker stopped:\n{log.read_text()[-2000:]}")
        raise SystemExit(f"the workers of {self.queue} did not answer within {timeout} s")

    def stop(self) -> None:
        for process in self.processes:
            process.terminate()
        for process in self.processes:
            try:
                process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                process.kill()


def run_job(kind: str, subject, params: dict, queue: str, timeout: float = 3600):
    """Start a job on ``queue`` and wait for it: (wall seconds, the finished job)."""
    from config.celery import app
    from core.jobs.queue import start_job
    from core.models import Job

    app.conf.task_default_queue = queue
    started = time.perf_counter()
    job = start_job(kind, subject, params)
    while True:
        state = Job.objects.values_list("state", flat=True).get(pk=job.pk)
        if state in (Job.State.SUCCEEDED, Job.State.FAILED):
            break
        if time.perf_counter() - started > timeout:
            raise SystemExit(f"job {job.pk} did not finish within {timeout} s")
        time.sleep(0.05)
    seconds = time.perf_counter() - started
    job.refresh_from_db()
    if job.state != Job.State.SUCCEEDED:
        raise SystemExit(f"job {job.pk} failed: {job.message}")
    return seconds, job


def part_facts(job) -> dict:
    """What the job's parts took, each on one core."""
    parts = list(job.chunks.filter(final=False).values_list("seconds", "worker"))
    final = job.chunks.get(final=True).seconds or 0.0
    seconds = [s for s, _ in parts]
    return {
        "parts": len(parts),
        "part_s_mean": round(statistics.fmean(seconds), 3) if seconds else None,
        "part_s_sum": round(sum(seconds), 2),
        "assembly_s": round(final, 3),
        "workers_used": len({w for _, w in parts}),
    }


def load() -> float:
    return round(os.getloadavg()[0], 2)


def compare(kind: str, subject, params: dict, counts, repeat: int, data_dir: Path, env=None):
    """Time the job on each worker count (alternating, best of ``repeat``)."""
    groups = {count: WorkerProcesses(count, data_dir, env) for count in counts}
    try:
        for group in groups.values():
            group.wait_ready()
        runs: dict[int, list[dict]] = {count: [] for count in counts}
        for attempt in range(repeat):
            for count, group in groups.items():
                before = load()
                seconds, job = run_job(kind, subject, params, group.queue)
                facts = part_facts(job)
                runs[count].append(
                    {
                        "wall_s": round(seconds, 3),
                        "load_1min_before": before,
                        # parts running at once on average: how busy the workers were kept
                        "parts_at_once": round(facts["part_s_sum"] / seconds, 2),
                        **facts,
                    }
                )
                print(
                    f"  {count} worker(s), run {attempt + 1}: {seconds:.2f} s "
                    f"(load {before}, {runs[count][-1]['workers_used']} used)",
                    file=sys.stderr,
                    flush=True,
                )
    finally:
        for group in groups.values():
            group.stop()
    return {
        count: {"best": min(items, key=lambda run: run["wall_s"]), "runs": items}
        for count, items in runs.items()
    }


def cores_for_an_hour(seconds_per_response: float, efficiency: float) -> int:
    """Worker cores that embed (or analyse) the study's responses in under an hour, at the
    per-core cost measured and the share of it kept when workers are added."""
    import math

    return math.ceil(STUDY_RESPONSES * seconds_per_response / (3600 * efficiency))


def time_one_process(run_job_here, runs: int) -> list[float]:
    """Seconds of each of ``runs`` calls of ``run_job_here()``: the job without a broker, in
    this process, the figure the workers are compared with."""
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        run_job_here()
        seconds.append(round(time.perf_counter() - started, 3))
        print(f"  one process: {seconds[-1]:.2f} s", file=sys.stderr, flush=True)
    return seconds


def uptime() -> str:
    """What ``uptime`` says: how busy the shared machine was around the runs."""
    return subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()


def machine_and_time(uptime_start: str) -> dict:
    """The results' ``machine`` (cores, ``uptime`` before and after the runs, Python) and
    ``at`` (now)."""
    return {
        "machine": {
            "cpus": os.cpu_count(),
            "uptime_start": uptime_start,
            "uptime_end": uptime(),
            "python": platform.python_version(),
        },
        "at": datetime.now(UTC).isoformat(timespec="seconds"),
    }


def best_rows(result: dict, cells) -> str:
    """The Markdown table's rows for 1 and 2 workers: the label, the best run's wall seconds,
    ``cells(label, best run)`` (the benchmark's own columns) and the load before it."""
    rows = []
    for label, key in (("1 worker", "1"), ("2 workers", "2")):
        best = result["workers"][key]["best"]
        rows.append(
            f"| {label} (1 core each) | {best['wall_s']:.2f} | {cells(label, best)} "
            f"| {best['load_1min_before']} |"
        )
    return "\n".join(rows)


def machine_line(result: dict) -> str:
    """The Markdown list item on the machine the runs shared."""
    machine = result["machine"]
    return (
        f"- Machine: {machine['cpus']} CPUs, shared; "
        f"`uptime` before: `{machine['uptime_start']}`;\n"
        f"  after: `{machine['uptime_end']}`; Python {machine['python']}; {result['at']}."
    )
