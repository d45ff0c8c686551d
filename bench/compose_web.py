"""The crowd path through docker-compose.yml itself: nginx, several web containers, PgBouncer.

README, "Deployment": ``COMPOSE_PROFILES=pgbouncer`` puts PgBouncer (transaction mode)
between the web containers and PostgreSQL, and ``--scale web=N`` runs N of them behind the
proxy. This benchmark brings that stack up with the repository's own compose file (the
proxy, ``web``, ``pgbouncer``, ``db`` and ``redis`` services; no Celery), in a few shapes —
web containers x gunicorn workers, with and without PgBouncer — and runs the crowd load of
``bench.crowd`` against the proxy: closed loop, annotators looping next -> label. After
each run it checks the guarantees in PostgreSQL (``bench/crowd/invariants.py``).

    python -m bench.compose_web                      # writes bench/results/compose-web.*
    python -m bench.compose_web --shapes direct:1x4 pgbouncer:2x2 --annotators 60

Needs a Docker daemon and ``docker-compose`` (or ``docker compose``). On a machine that
reaches no image registry, ``bench/compose/standins/build.sh`` first builds stand-ins for
the public images the compose file starts from, out of Debian's packages.

The batch and its past participants are written from this process straight into the
``db`` container (published on a local port by ``bench/compose/bench.override.yml``, which
also lifts the limit on new entries per address: every simulated annotator comes from
this machine). CPU per cycle: the web containers' processes (gunicorn), PostgreSQL's, and
PgBouncer's and the proxy's together, read from /proc on the host.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from bench.crowd import invariants, procstat
from bench.crowd.measure import run_measurement
from bench.crowd.setup_db import (
    Database,
    django_env,
    ensure_capacity,
    prepare,
    vacuum_analyze,
)

REPO = Path(__file__).resolve().parent.parent
OVERRIDE = REPO / "bench" / "compose" / "bench.override.yml"
PROJECT = "benchweb"
SLUG = "compose-bench"
PASSWORD = "judgments"


@dataclass(frozen=True)
class Shape:
    """One way to run the web tier: ``web`` containers x gunicorn ``workers`` each, with or
    without PgBouncer between them and PostgreSQL, the hot statements prepared or not
    (``DATABASE_PREPARED_STATEMENTS``, as behind a PgBouncer before 1.21)."""

    route: str  # one of ROUTES
    web: int
    workers: int

    ROUTES = ("direct", "pgbouncer", "pgbouncer-unprepared")

    @classmethod
    def parse(cls, text: str) -> Shape:
        route, _, size = text.partition(":")
        web, _, workers = size.partition("x")
        if route not in cls.ROUTES or not web.isdigit() or not workers.isdigit():
            raise argparse.ArgumentTypeError(
                f"{text!r}: expected ROUTE:WxK, ROUTE one of {', '.join(cls.ROUTES)}"
            )
        return cls(route, int(web), int(workers))

    @property
    def pgbouncer(self) -> bool:
        return self.route != "direct"

    def __str__(self) -> str:
        return f"{self.route}:{self.web}x{self.workers}"

    def environment(self) -> dict[str, str]:
        """What a deployment sets in .env for this shape (docker-compose.yml's comments)."""
        env = {"WEB_CONCURRENCY": str(self.workers)}
        if self.route == "pgbouncer-unprepared":
            env["DATABASE_PREPARED_STATEMENTS"] = "0"
        if self.pgbouncer:
            env.update(
                {
                    "COMPOSE_PROFILES": "pgbouncer",
                    "DATABASE_HOST": "pgbouncer",
                    "DATABASE_PORT": "6432",
                    "DATABASE_TRANSACTION_POOLING": "1",
                }
            )
        return env


def compose_command() -> list[str]:
    if shutil.which("docker-compose"):
        return ["docker-compose"]
    return ["docker", "compose"]


class Stack:
    """The compose project: its environment, its commands and its containers' processes."""

    def __init__(self, port: int, db_port: int):
        self.port = port
        self.db_port = db_port
        self.base_env = dict(os.environ)
        self.base_env.update(
            {
                "SECRET_KEY": "bench-compose-not-a-secret-0123456789abcdefghijklmnopqrstuvwxyz",
                "POSTGRES_PASSWORD": PASSWORD,
                "PORT": str(port),
                "BENCH_DB_PORT": str(db_port),
                "ALLOWED_HOSTS": "127.0.0.1,localhost",
                # plain HTTP on this machine: cookies without the Secure flag
                "SESSION_COOKIE_SECURE": "0",
                "CSRF_COOKIE_SECURE": "0",
            }
        )
        for key in (
            "COMPOSE_PROFILES",
            "DATABASE_HOST",
            "DATABASE_PORT",
            "DATABASE_PREPARED_STATEMENTS",
            "WEB_CONCURRENCY",
        ):
            self.base_env.pop(key, None)
        self.env = dict(self.base_env)

    def run(self, *args: str, check: bool = True) -> str:
        command = [
            *compose_command(),
            "-p",
            PROJECT,
            "-f",
            str(REPO / "docker-compose.yml"),
            "-f",
            str(OVERRIDE),
            *args,
        ]
        done = subprocess.run(command, cwd=REPO, env=self.env, capture_output=True, text=True)
        if check and done.returncode != 0:
            raise RuntimeError(f"{' '.join(args)} failed:\n{done.stderr[-3000:]}")
        return done.stdout

    def use(self, shape: Shape | None) -> None:
        self.env = dict(self.base_env, **(shape.environment() if shape else {}))

    def pids(self, service: str) -> list[int]:
        ids = self.run("ps", "-q", service, check=False).split()
        pids = []
        for container in ids:
            done = subprocess.run(
                ["docker", "inspect", "-f", "{{.State.Pid}}", container],
                capture_output=True,
                text=True,
            )
            if done.returncode == 0 and done.stdout.strip().isdigit():
                pids.append(int(done.stdout.strip()))
        return pids

    def down(self) -> None:
        self.use(Shape("pgbouncer", 1, 1))  # the profile's services too
        self.run("down", "-v", "--remove-orphans", check=False)


class WebTier:
    """What ``run_measurement`` needs of a server: where the clients go and the web
    containers' CPU time. Each time that is read (at the window's start and end) the CPU
    time of the proxy and PgBouncer is read too (``beside_readings``)."""

    def __init__(self, stack: Stack):
        self.stack = stack
        self.roots = stack.pids("web")
        self.beside = stack.pids("proxy") + stack.pids("pgbouncer")
        self.beside_readings: list[float] = []

    def client_url(self, process: int) -> str:
        return f"http://127.0.0.1:{self.stack.port}"

    def cpu_by_container(self) -> list[float]:
        return [procstat.tree_seconds(pid) for pid in self.roots]

    def cpu_seconds(self) -> float:
        self.beside_readings.append(sum(procstat.tree_seconds(pid) for pid in self.beside))
        return sum(self.cpu_by_container())


def wait_until(check, what: str, limit: float = 300.0) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        try:
            if check():
                return
        except Exception:  # not up yet
            pass
        time.sleep(1.0)
    raise RuntimeError(f"{what} did not come up in {limit:g} s")


def answers(url: str) -> bool:
    with urllib.request.urlopen(url, timeout=5) as response:
        return response.status == 200


def measure_shape(stack: Stack, shape: Shape, db: Database, env: dict, batch, args, log) -> dict:
    stack.use(shape)
    stack.run("rm", "-sf", "proxy", "web", "pgbouncer", check=False)
    services = ["web", "proxy"] + (["pgbouncer"] if shape.pgbouncer else [])
    log(f"{shape}: up ({' '.join(services)})")
    stack.run("up", "-d", "--scale", f"web={shape.web}", *services)
    wait_until(lambda: answers(f"http://127.0.0.1:{stack.port}/healthz"), "the proxy")
    web = WebTier(stack)
    if len(web.roots) != shape.web:
        raise RuntimeError(f"{shape}: {len(web.roots)} web containers are running")
    postmaster = stack.pids("db")[0]
    best = None
    windows = []  # every window's rate and answers, not only the best one's
    for repeat in range(args.repeat):
        ensure_capacity(db, env, batch, int(args.annotators * 400 * args.duration / 20), log)
        vacuum_analyze(db)  # each window starts from tables in the same state, as bench.crowd
        prefix = f"cw-{int(time.time())}-{repeat}-"
        each_before = web.cpu_by_container()
        outcome = run_measurement(
            server=web,
            target="platform",
            mode="closed",
            level=args.annotators,
            procs=1,
            worker_prefix=prefix,
            slug=SLUG,
            warmup=args.warmup,
            duration=args.duration,
            drain=10.0,
            pool_seconds=2.0,
            p99_bound_ms=500.0,
            db=db,
            postmaster=postmaster,
            seed=repeat,
        )
        figures = outcome["figures"]
        cycles = figures["cycles_per_s"] * args.duration
        start, end = web.beside_readings[-2:]  # the window's, as the web's CPU figure
        figures["proxy_and_pgbouncer_cpu_ms_per_cycle"] = round(
            1000 * (end - start) / max(cycles, 1), 2
        )
        # the proxy spreads the requests over the containers: each one's CPU seconds over
        # the whole measurement (entries, warm-up, window)
        figures["web_cpu_s_by_container"] = [
            round(after - before, 2)
            for before, after in zip(each_before, web.cpu_by_container(), strict=True)
        ]
        labels = outcome["labels"]
        figures["invariants"] = invariants.check(
            db, SLUG, prefix, labels["acked"], labels["unknown"], labels["refused"]
        )
        log(
            f"{shape}: {figures['cycles_per_s']:.1f} cycles/s, "
            f"errors {figures['errors']}, invariants {figures['invariants'].get('ok')}"
        )
        windows.append(
            {
                key: figures[key]
                for key in ("cycles_per_s", "errors", "statuses", "next", "label", "invariants")
            }
        )
        if best is None or figures["cycles_per_s"] > best["cycles_per_s"]:
            best = figures
    return {"shape": str(shape), **best, "windows": windows}


def write_results(results: dict, out_dir: Path, name: str) -> None:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / f"{name}.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    lines = [
        "# The crowd path through docker-compose.yml: web containers, PgBouncer",
        "",
        f"Generated by `python -m bench.compose_web` on {results['meta']['started_at']}. "
        f"Closed loop, {results['meta']['annotators']} annotators looping next → label "
        f"through the proxy (nginx) to the web containers (gunicorn, sync workers), "
        f"PostgreSQL and Redis in their own containers; best of {results['meta']['repeat']} "
        f"windows of {results['meta']['duration']:g} s per shape. *W×K*: W web containers "
        "of K workers each; *pgbouncer-unprepared*: the hot statements not prepared "
        "(`DATABASE_PREPARED_STATEMENTS=0`, as behind a PgBouncer before 1.21).",
        "",
        "| shape | cycles/s (each window) | next p50/p95/p99 ms | label p50/p95/p99 ms | errors | "
        "CPU ms/cycle web / PostgreSQL / proxy+PgBouncer / client | web containers' CPU s (each) | "
        "xacts/req | invariants |",
        "|---|---:|---|---|---:|---|---|---:|---|",
    ]
    for row in results["shapes"]:
        cpu = row["cpu_ms_per_cycle"]

        def spread(latency):
            return " / ".join(
                "–" if latency[q] is None else f"{latency[q]:.1f}" for q in ("p50", "p95", "p99")
            )

        rates = ", ".join(f"{window['cycles_per_s']:.0f}" for window in row["windows"])
        broken = [
            window["invariants"] for window in row["windows"] if not window["invariants"]["ok"]
        ]
        lines.append(
            f"| {row['shape']} | **{row['cycles_per_s']:.1f}** ({rates}) | "
            f"{spread(row['next'])} | "
            f"{spread(row['label'])} | {row['errors']} | {cpu['server']:.1f} / {cpu['postgres']:.1f}"
            f" / {row['proxy_and_pgbouncer_cpu_ms_per_cycle']:.1f} / {cpu['client']:.1f} | "
            f"{' / '.join(str(s) for s in row['web_cpu_s_by_container'])} | "
            f"{row['postgres']['xacts_per_request']:.2f} | "
            f"{'ok in every window' if not broken else 'FAILED: ' + json.dumps(broken)} |"
        )
    failed = [
        f"{row['shape']} window {number}: {json.dumps(window['statuses'])}"
        for row in results["shapes"]
        for number, window in enumerate(row["windows"], start=1)
        if window["errors"]
    ]
    if failed:
        lines += ["", "Answers of the windows with errors: " + "; ".join(failed) + "."]
    meta = results["meta"]
    lines += [
        "",
        "## Setup",
        "",
        f"- Machine: {meta['machine']['cores']} cores, load average before "
        f"{' '.join(str(v) for v in meta['load_before'])}; Docker {meta['docker']}; "
        f"{meta['compose']}.",
        f"- Images: {meta['images']}.",
        f"- Code: commit `{meta['git'].get('commit', '?')[:12]}`, the work tree as it was "
        f"({meta['git'].get('dirty_files', 0)} files changed from the commit).",
        f"- Batch: absolute, N = 25, {meta['items']} items at the start, "
        f"{meta['past_participants']} past participants.",
        "",
    ]
    (out_dir / f"{name}.md").write_text("\n".join(lines))


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--shapes",
        nargs="+",
        type=Shape.parse,
        default=[
            Shape.parse(s)
            for s in (
                "direct:1x4",
                "pgbouncer:1x4",
                "pgbouncer-unprepared:1x4",
                "pgbouncer:2x2",
                "pgbouncer:2x4",
            )
        ],
        help="web tiers to measure: ROUTE:WxK, W containers of K workers; ROUTE direct, "
        "pgbouncer, or pgbouncer-unprepared (DATABASE_PREPARED_STATEMENTS=0)",
    )
    parser.add_argument("--annotators", type=int, default=60)
    parser.add_argument("--duration", type=float, default=20.0)
    parser.add_argument("--warmup", type=float, default=3.0)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--items", type=int, default=4000)
    parser.add_argument("--past-participants", type=int, default=500)
    parser.add_argument("--port", type=int, default=18080)
    parser.add_argument("--db-port", type=int, default=15432)
    parser.add_argument("--keep", action="store_true", help="leave the stack running")
    parser.add_argument("--out-dir", default=str(REPO / "bench" / "results"))
    parser.add_argument("--name", default="compose-web")
    return parser.parse_args(argv)


BASE_IMAGES = ("python:3.11-slim", "postgres:15", "redis:7", "nginx:1.27-alpine")
STANDIN_LABEL = "dense-judgments.standin"


def base_images() -> str:
    """The public images the compose file starts from, and whether each is the official one
    or a stand-in built by bench/compose/standins/build.sh."""
    described = []
    for image in BASE_IMAGES:
        done = subprocess.run(
            [
                "docker",
                "image",
                "inspect",
                "-f",
                f'{{{{index .Config.Labels "{STANDIN_LABEL}"}}}}',
                image,
            ],
            capture_output=True,
            text=True,
        )
        standin = done.returncode == 0 and done.stdout.strip() not in ("", "<no value>")
        described.append(f"{image}{' (stand-in from Debian packages)' if standin else ''}")
    return ", ".join(described)


def _version(command: list[str]) -> str:
    done = subprocess.run(command, capture_output=True, text=True)
    return done.stdout.strip().splitlines()[0] if done.returncode == 0 else "unknown"


def main(argv=None) -> int:
    args = parse_args(argv)

    def log(message: str) -> None:
        print(f"[compose_web {time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)

    stack = Stack(args.port, args.db_port)
    db = Database(f"postgres://judgments:{PASSWORD}@127.0.0.1:{args.db_port}", "judgments")
    tmp = Path(tempfile.mkdtemp(prefix="bench-compose-"))
    results = {
        "meta": {
            "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
            "machine": procstat.machine_info(),
            "load_before": procstat.load_average(),
            "git": procstat.git_info(REPO),
            "docker": _version(["docker", "version", "-f", "{{.Server.Version}}"]),
            "compose": _version([*compose_command(), "version"]),
            "annotators": args.annotators,
            "duration": args.duration,
            "repeat": args.repeat,
            "items": args.items,
            "past_participants": args.past_participants,
        },
        "shapes": [],
    }
    try:
        stack.use(None)
        log("building the web and PgBouncer images")
        stack.use(Shape("pgbouncer", 1, 1))
        stack.run("build", "web", "pgbouncer")
        stack.use(None)
        log("db and redis up")
        stack.run("up", "-d", "db", "redis")
        wait_until(lambda: db.connect(connect_timeout=2).close() is None, "PostgreSQL")
        results["meta"]["images"] = base_images()
        env = django_env(db, tmp / "static", {"ENTRY_RATE_LIMIT_PER_HOUR": "0"})
        batch = prepare(
            db,
            env,
            tmp / "static",
            SLUG,
            args.items,
            25,
            log,
            past_participants=args.past_participants,
        )
        for shape in args.shapes:
            results["shapes"].append(measure_shape(stack, shape, db, env, batch, args, log))
            write_results(results, Path(args.out_dir), args.name)
    finally:
        if not args.keep:
            stack.down()
        shutil.rmtree(tmp, ignore_errors=True)
    every_window = [window for row in results["shapes"] for window in row["windows"]]
    return 0 if all(window["invariants"]["ok"] for window in every_window) else 1


if __name__ == "__main__":
    sys.exit(main())
