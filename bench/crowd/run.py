"""Crowd load benchmark: the platform against the no-database ceiling (see README.md).

.venv/bin/python -m bench.crowd --quick          # a smoke run, about a minute
.venv/bin/python -m bench.crowd                  # closed 8/60/200, open 100/300 per s
"""

from __future__ import annotations

import argparse
import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

if __package__ in (None, ""):  # run as a script: bench/crowd/run.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from bench.crowd import invariants, procstat, report, spy, web_tier  # noqa: E402
from bench.crowd.measure import run_measurement  # noqa: E402
from bench.crowd.server import NO_DATABASE_URL, Server  # noqa: E402
from bench.crowd.setup_db import (  # noqa: E402
    REPO,
    BenchBatch,
    Database,
    code_dir,
    django_env,
    drop_database,
    ensure_capacity,
    export_commit,
    prepare,
    vacuum_analyze,
)

SLUG = "crowd-bench"
PG_SETTINGS = (
    "max_connections",
    "shared_buffers",
    "fsync",
    "synchronous_commit",
    "autovacuum",
)


def _floats(text: str) -> list[float]:
    return [float(v) for v in text.split(",") if v.strip()]


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m bench.crowd",
        description=(
            "Load benchmark of the crowdworker flow (next + label) served by gunicorn, "
            "against a no-database Django view served the same way (the ceiling). Writes "
            "bench/results/crowd.json and crowd.md."
        ),
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        help="smoke run: 1 s warm-up, 3 s windows, closed loop at 60 only, open loop at 100/s",
    )
    parser.add_argument(
        "--concurrency", default="8,60,200", help="closed-loop annotators, comma separated"
    )
    parser.add_argument(
        "--rates", default="100,300", help="open-loop cycles per second ('' for none)"
    )
    parser.add_argument("--duration", type=float, default=20.0, help="measured window per run, s")
    parser.add_argument("--warmup", type=float, default=3.0, help="warm-up before each window, s")
    parser.add_argument(
        "--drain", type=float, default=10.0, help="wait for running cycles after a window, s"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=1,
        help="repeat each (ceiling, platform) pair K times; best of K",
    )
    parser.add_argument("--workers", type=int, default=4, help="gunicorn workers (per server)")
    web_tier.add_arguments(parser)
    parser.add_argument("--worker-class", default="sync", help="gunicorn worker class (-k)")
    parser.add_argument("--threads", type=int, default=1, help="gunicorn --threads (gthread)")
    parser.add_argument(
        "--timeout",
        type=int,
        default=0,
        help="gunicorn --timeout for both servers (0: gunicorn's default, 30 s)",
    )
    parser.add_argument(
        "--client-procs", type=int, default=1, help="client processes (one asyncio loop each)"
    )
    parser.add_argument("--per-item", type=int, default=25, help="N, labels per item")
    parser.add_argument(
        "--items",
        type=int,
        default=None,
        help="items imported at the start (default 8000, quick 2000); more are imported when the batch runs low",
    )
    parser.add_argument(
        "--past-participants",
        type=int,
        default=2000,
        help="people who entered the batch before the run and are no longer at work "
        "(a study's population; 0: the batch's first minute)",
    )
    parser.add_argument(
        "--p99-bound-ms",
        type=float,
        default=500.0,
        help="open loop: the rate is held when p99 of next and of label stay under this",
    )
    parser.add_argument(
        "--pool-seconds",
        type=float,
        default=2.0,
        help="open loop: annotators in the pool = rate × this",
    )
    parser.add_argument(
        "--env",
        action="append",
        default=[],
        metavar="KEY=VALUE",
        help="extra environment for both servers, e.g. CONN_MAX_AGE=60 (repeatable)",
    )
    parser.add_argument(
        "--redis",
        default="redis://127.0.0.1:6379/15",
        help="REDIS_URL of both servers, as in production (sessions read from the cache, "
        "shared login and rate-limit counts); '' runs without Redis (database sessions, "
        "the embedded default). Skipped with a note when it does not answer",
    )
    parser.add_argument(
        "--pg",
        default="postgres://postgres@127.0.0.1:5432",
        help="PostgreSQL server URL (no database)",
    )
    parser.add_argument(
        "--db-name", default="bench_crowd", help="the benchmark's database (dropped and created)"
    )
    parser.add_argument("--keep-db", action="store_true", help="keep the database at the end")
    parser.add_argument(
        "--no-vacuum", action="store_true", help="skip VACUUM ANALYZE before each run"
    )
    parser.add_argument(
        "--profile",
        type=float,
        default=0.0,
        metavar="SECONDS",
        help="after the runs, py-spy one platform worker for SECONDS under closed-loop load (60 annotators)",
    )
    parser.add_argument(
        "--out-dir",
        default=str(REPO / "bench" / "results"),
        help="where crowd.json and crowd.md go",
    )
    parser.add_argument(
        "--commit",
        default=None,
        metavar="REV",
        help="benchmark this commit (git archive into a temporary folder) instead of the work "
        "tree as it is; the benchmark's own code and the results stay in this checkout",
    )
    parser.add_argument(
        "--name",
        default="crowd",
        help="the results' file name: NAME.json and NAME.md (e.g. crowd-gthread for a run "
        "with another worker class)",
    )
    parser.add_argument(
        "--wait-quiet",
        type=float,
        default=0.0,
        metavar="MINUTES",
        help="first wait (at most MINUTES) until the 1-minute load average is below 1.5 × cores",
    )
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    args.concurrency = _floats(args.concurrency)
    args.rates = _floats(args.rates)
    if args.quick:
        args.duration = min(args.duration, 3.0)
        args.warmup = min(args.warmup, 1.0)
        args.drain = min(args.drain, 5.0)
        args.concurrency = [60.0]
        args.rates = [100.0]
    if args.items is None:
        args.items = 2000 if args.quick else 8000
    extra = {}
    for pair in args.env:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            parser.error(f"--env takes KEY=VALUE, got {pair!r}")
        extra[key] = value
    args.extra_env = extra
    args.redis = args.redis.strip()
    args.web_servers = max(1, args.web_servers)
    args.client_procs = max(args.client_procs, args.web_servers)
    return args


def redis_if_answering(url: str) -> str:
    """``url`` if a Redis server answers PING there (within a second), else ``''``."""
    if not url:
        return ""
    import redis

    try:
        redis.Redis.from_url(url, socket_connect_timeout=1, socket_timeout=1).ping()
    except (redis.exceptions.RedisError, OSError):
        print(f"bench.crowd: no Redis at {url}; running without it", file=sys.stderr)
        return ""
    return url


class Runner:
    def __init__(self, args: argparse.Namespace):
        self.args = args
        self.started = time.monotonic()
        self.db = Database(args.pg, args.db_name)
        self.tmp = Path(tempfile.mkdtemp(prefix="bench-crowd-"))
        self.static_root = self.tmp / "static"
        if args.commit:
            export_commit(args.commit, self.tmp / "src")
        self.redis_url = redis_if_answering(args.redis)
        # every simulated annotator enters from this machine's address, which the production
        # limit on new entries per address (30 an hour) would refuse after the first few
        server_env = {"ENTRY_RATE_LIMIT_PER_HOUR": "0", **dict(args.extra_env)}
        if self.redis_url and "REDIS_URL" not in server_env:
            server_env["REDIS_URL"] = self.redis_url
        self.env = django_env(self.db, self.static_root, server_env)
        self.servers: dict[str, Server] = {}
        self.bouncer: web_tier.Bouncer | None = None
        self.batch: BenchBatch | None = None
        self.postmaster = procstat.find_postmaster()
        self.out_dir = Path(args.out_dir)
        self.best_platform_rate = 0.0
        self.results: dict = {
            "meta": {
                "started_at": datetime.now(UTC).isoformat(timespec="seconds"),
                "machine": procstat.machine_info(),
                "git": procstat.git_info(REPO, args.commit),
                "options": {
                    "concurrency": args.concurrency,
                    "rates": args.rates,
                    "duration": args.duration,
                    "warmup": args.warmup,
                    "drain": args.drain,
                    "repeat": args.repeat,
                    "workers": args.workers,
                    "web_servers": args.web_servers,
                    "pgbouncer_pool_size": args.pgbouncer_pool_size if args.pgbouncer else None,
                    "worker_class": args.worker_class,
                    "threads": args.threads,
                    "timeout": args.timeout,
                    "client_procs": args.client_procs,
                    "per_item": args.per_item,
                    "past_participants": args.past_participants,
                    "p99_bound_ms": args.p99_bound_ms,
                    "pool_seconds": args.pool_seconds,
                    "env": args.extra_env,
                    "redis": self.redis_url or None,
                    "quick": args.quick,
                },
            },
            "measurements": [],
            "notes": [],
        }

    def log(self, message: str) -> None:
        print(f"[{time.monotonic() - self.started:7.1f}s] {message}", file=sys.stderr, flush=True)

    # ------------------------------------------------------------------ setup
    def setup(self) -> None:
        args = self.args
        self.results["meta"]["postgres_settings"] = self._pg_settings()
        self.batch = prepare(
            self.db,
            self.env,
            self.static_root,
            SLUG,
            args.items,
            args.per_item,
            self.log,
            past_participants=args.past_participants,
        )
        ceiling_env = dict(self.env)
        ceiling_env.update(
            {
                "DJANGO_SETTINGS_MODULE": "bench.crowd.ceiling_settings",
                "DATABASE_URL": NO_DATABASE_URL,
            }
        )
        common = {
            "workers": args.workers,
            "worker_class": args.worker_class,
            "threads": args.threads,
            "timeout": args.timeout,
        }
        self.bouncer, self.platform_env = web_tier.database_route(
            args, self.env, self.db.url, self.results["meta"]
        )
        self.servers["ceiling"] = web_tier.server_group(
            args.web_servers, "ceiling", "bench.crowd.ceiling", ceiling_env, self.tmp, **common
        )
        self.servers["platform"] = web_tier.server_group(
            args.web_servers, "platform", "config.wsgi", self.platform_env, self.tmp, **common
        )
        self.servers["ceiling"].start("/ceiling/entry")
        self.servers["platform"].start("/healthz")
        command = self.servers["platform"].command
        self.results["meta"]["server_command"] = " ".join(
            shlex.quote(part) for part in [Path(command[0]).name, *command[1:]]
        )
        self.log(
            f"servers up: platform {self.servers['platform'].base_url}, ceiling {self.servers['ceiling'].base_url}"
        )
        self.results["sql_per_request"] = self._sql_per_request()
        self.results["meta"]["database_connections"] = self._connection_mode()

    def _connection_mode(self) -> str:
        """How the platform's settings connect to PostgreSQL (pool, persistent, per request)."""
        probe = (
            "import django; django.setup(); from django.conf import settings; "
            "d = settings.DATABASES['default']; p = d.get('OPTIONS', {}).get('pool'); "
            "print(f\"psycopg pool {p}, health checks {d['CONN_HEALTH_CHECKS']}\" if p else "
            "f\"CONN_MAX_AGE={d['CONN_MAX_AGE']}, health checks {d['CONN_HEALTH_CHECKS']}\")"
        )
        done = subprocess.run(
            [sys.executable, "-c", probe],
            cwd=code_dir(),
            env=self.platform_env,
            capture_output=True,
            text=True,
        )
        return done.stdout.strip() or f"unknown ({done.stderr.strip()[-200:]})"

    def _pg_settings(self) -> dict:
        import psycopg

        with psycopg.connect(self.db.admin_url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT name, setting, unit FROM pg_settings WHERE name = ANY(%s)",
                [list(PG_SETTINGS)],
            ).fetchall()
            version = conn.execute("SHOW server_version").fetchone()[0]
            preload = conn.execute("SHOW shared_preload_libraries").fetchone()[0]
        settings = {"version": version}
        for name, setting, unit in rows:
            settings[name] = f"{setting}{'×' + unit if unit and unit != 's' else ''}"
        settings["shared_preload_libraries"] = preload or "(none: no pg_stat_statements)"
        return settings

    def _sql_per_request(self) -> dict | None:
        self.log("counting SQL statements per request (in-process, Django test client)")
        done = subprocess.run(
            [sys.executable, "-m", "bench.crowd.sqlcount", SLUG, "--cycles", "30"],
            cwd=code_dir(),
            env=self.env,
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            self.results["notes"].append(f"SQL count failed: {done.stderr.strip()[-500:]}")
            self.log(f"SQL count failed:\n{done.stderr[-2000:]}")
            return None
        return json.loads(done.stdout)

    # ------------------------------------------------------------------ runs
    def measure(self, target: str, mode: str, level: float, repeat: int) -> dict:
        args = self.args
        tag = f"{mode[0]}{level:g}-{target[0]}{repeat}".replace(".", "p")
        prefix = f"bench-{int(time.time())}-{tag}-"
        if target == "platform":
            window = args.warmup + args.duration + args.drain
            if mode == "closed":
                expected = max(self.best_platform_rate * 1.5, 600.0) * window + level
            else:
                expected = level * 1.2 * window + level * args.pool_seconds
            ensure_capacity(self.db, self.env, self.batch, int(expected), self.log)
        if not args.no_vacuum:
            vacuum_analyze(self.db)
        self.log(
            f"{mode} loop, {level:g} {'annotators' if mode == 'closed' else 'cycles/s'}: {target} (repeat {repeat + 1})"
        )
        outcome = self._clients(
            target,
            mode,
            level,
            prefix,
            warmup=args.warmup,
            duration=args.duration,
            seed=args.seed + repeat,
        )
        figures = outcome["figures"]
        figures["idle_wait_after_s"] = round(self.servers[target].wait_idle(), 1)
        run = {"figures": figures, "worker_prefix": prefix}
        if target == "platform":
            time.sleep(0.5)
            labels = outcome["labels"]
            run["invariants"] = invariants.check(
                self.db, SLUG, prefix, labels["acked"], labels["unknown"], labels["refused"]
            )
            self.best_platform_rate = max(self.best_platform_rate, figures["cycles_per_s"])
        self.log(
            f"  -> {figures['cycles_per_s']} cycles/s, next p99 {figures['next']['p99']} ms, "
            f"label p99 {figures['label']['p99']} ms, errors {figures['errors']}, "
            f"client {figures['cpu_share']['client_busiest_process']} core"
            + (
                f", invariants {'ok' if run['invariants']['ok'] else 'FAILED'}"
                if target == "platform"
                else ""
            )
        )
        return run

    def _clients(self, target: str, mode: str, level: float, prefix: str, **window) -> dict:
        """The clients run against ``target``'s server (``run_measurement``) with this run's
        client processes, drain, open-loop pool and p99 bound; ``window``: the measurement's
        own ``warmup``, ``duration`` and ``seed`` (and ``on_window_start``)."""
        args = self.args
        return run_measurement(
            server=self.servers[target],
            target=target,
            mode=mode,
            level=level,
            procs=args.client_procs,
            worker_prefix=prefix,
            slug=SLUG,
            drain=args.drain,
            pool_seconds=args.pool_seconds,
            p99_bound_ms=args.p99_bound_ms,
            db=self.db,
            postmaster=self.postmaster,
            **window,
        )

    def run_all(self) -> None:
        args = self.args
        plan = [("closed", c) for c in args.concurrency] + [("open", r) for r in args.rates]
        for mode, level in plan:
            group = {"mode": mode, "level": level, "ceiling": [], "platform": []}
            self.results["measurements"].append(group)
            for repeat in range(args.repeat):
                for target in report.TARGETS:
                    group[target].append(self.measure(target, mode, level, repeat))
                    self.save()
        self._client_notes()
        busy = report.contamination_note(self.results)
        if busy:
            self.results["notes"].append(busy)
        if args.profile > 0:
            self.profile(args.profile)

    def _client_notes(self) -> None:
        busiest = 0.0
        for _, _, run in report.every_run(self.results):
            busiest = max(busiest, run["figures"]["cpu_share"]["client_busiest_process"])
        note = f"Busiest client process used {busiest:.2f} of a core in a window" + (
            " — it may have limited the measurement; try --client-procs 2."
            if busiest >= 0.9
            else " (below 0.9: the client was not the bottleneck)."
        )
        self.results["notes"].append(note)

    def profile(self, seconds: float) -> None:
        """py-spy one platform worker while 60 annotators loop (not part of the table)."""
        if not spy.py_spy():
            self.results["notes"].append("py-spy not installed: no profile")
            return
        server = self.servers["platform"]
        workers = server.worker_pids()
        if not workers:
            return
        raw = self.tmp / "py-spy.txt"
        args = self.args
        self.log(f"profiling worker {workers[0]} for {seconds:g} s under 60 annotators")
        holder = {}
        ensure_capacity(self.db, self.env, self.batch, int(600 * (seconds + 10)), self.log)
        outcome = self._clients(
            "platform",
            "closed",
            60,
            f"bench-{int(time.time())}-profile-",
            warmup=3.0,
            duration=seconds + 1.0,
            seed=args.seed,
            on_window_start=lambda: holder.setdefault("spy", spy.record(workers[0], seconds, raw)),
        )
        proc = holder.get("spy")
        if proc is None:
            return
        _, err = proc.communicate(timeout=seconds + 60)
        if proc.returncode != 0 or not raw.exists():
            self.results["notes"].append(f"py-spy failed: {err.decode(errors='replace')[-300:]}")
            return
        result = spy.analyse(raw)
        figures = outcome["figures"]
        result["load"] = {
            key: figures[key] for key in ("cycles_per_s", "next", "label", "statuses")
        }
        result["note"] = (
            f"one of {len(workers)} workers, {seconds:g} s, closed loop at 60 annotators, wall time incl. waits on PostgreSQL"
        )
        self.results["profile"] = result

    # ------------------------------------------------------------------ end
    def save(self) -> None:
        self.results["meta"]["elapsed_s"] = round(time.monotonic() - self.started, 1)
        self.results["meta"]["batch_items"] = self.batch.items if self.batch else None
        report.write_json(self.results, self.out_dir / f"{self.args.name}.json")
        report.write_markdown(self.results, self.out_dir / f"{self.args.name}.md")

    def close(self, failed: bool) -> None:
        for server in self.servers.values():
            server.stop()
        if self.bouncer is not None:
            if failed:
                self.log(f"pgbouncer's log ends:\n{self.bouncer.log_text()}")
            self.bouncer.stop()
        if failed:
            self.log(f"server logs kept in {self.tmp}")
        else:
            shutil.rmtree(self.tmp, ignore_errors=True)
        if not self.args.keep_db:
            try:
                drop_database(self.db)
            except Exception as error:  # the results are written; say so and go on
                self.log(f"could not drop {self.db.name}: {error}")
        else:
            self.log(f"kept database {self.db.url}")


def wait_for_quiet_machine(minutes: float) -> None:
    limit = 1.5 * (procstat.machine_info()["cores"] or 1)
    deadline = time.monotonic() + minutes * 60
    while time.monotonic() < deadline:
        load = procstat.load_average()[0]
        if load < limit:
            return
        print(f"load average {load:.1f} >= {limit:g}: waiting", file=sys.stderr, flush=True)
        time.sleep(15)
    print("the machine did not get quiet: running all the same", file=sys.stderr, flush=True)


def main(argv=None) -> int:
    args = parse_args(argv)
    if args.wait_quiet > 0:
        wait_for_quiet_machine(args.wait_quiet)
    runner = Runner(args)
    failed = True
    try:
        runner.setup()
        runner.run_all()
        runner.save()
        failed = False
    finally:
        runner.close(failed)
    name = runner.args.name
    runner.log(f"wrote {runner.out_dir / (name + '.json')} and {runner.out_dir / (name + '.md')}")
    print(report.render_markdown(runner.results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
