"""One measurement: one server, one mode, one load level; snapshots and the figures.

The window is ``[t0 + warmup, t0 + warmup + duration)``. Figures:

* ``cycles_per_s``: labels answered 2xx whose answer arrived in the window / duration;
* latencies (ms) of ``next`` and ``label``: requests that started in the window and were
  answered (any HTTP status), p50/p95/p99/max;
* ``statuses``: per request kind, the count of each HTTP status (or exception name)
  among the requests that started in the window;
* CPU ms per cycle: the CPU time used in the window by the gunicorn server (master and
  workers), by PostgreSQL (every process of the cluster, see ``procstat.py``) and by
  the client processes, divided by the window's cycles;
* ``xacts_per_request``: PostgreSQL transactions committed or rolled back in the
  benchmark's database during the window (``pg_stat_database``) per answered request.
  With autocommit every statement outside ``transaction.atomic`` is a transaction of
  its own, so this approaches statements per request from below;
* open loop: ``missed`` starts, the scheduled → label-answered ``cycle`` latency (it
  includes any start lag of the client), the client's start lag, and ``held``.
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

from bench.crowd import clients, procstat
from bench.crowd.setup_db import Database

# open loop: at most this long is spent entering the pool's annotators (a slow server
# gets a smaller pool, and so more missed starts, rather than minutes of set-up)
OPEN_LOOP_ENTRY_LIMIT = 120.0

PG_COUNTERS = (
    "xact_commit",
    "xact_rollback",
    "tup_returned",
    "tup_fetched",
    "tup_inserted",
    "tup_updated",
    "tup_deleted",
    "blks_hit",
    "blks_read",
)


def percentile(values: list[float], q: float) -> float | None:
    """Linear interpolation between closest ranks (NumPy's default)."""
    if not values:
        return None
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = math.floor(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def latency_summary(seconds: list[float]) -> dict:
    def ms(value):
        return None if value is None else round(value * 1000, 1)

    return {
        "n": len(seconds),
        "p50": ms(percentile(seconds, 50)),
        "p95": ms(percentile(seconds, 95)),
        "p99": ms(percentile(seconds, 99)),
        "max": ms(max(seconds, default=None)),
    }


@dataclass
class Snapshot:
    t: float
    server_cpu: float
    pg_cpu: float
    client_cpu: dict[int, float]
    machine_busy: float
    machine_total: float
    pg_stats: dict[str, dict[str, int]]


def pg_stats(db: Database) -> dict[str, dict[str, int]]:
    import psycopg

    with psycopg.connect(db.admin_url, autocommit=True) as conn:
        rows = conn.execute(
            f"SELECT datname, {', '.join(PG_COUNTERS)} FROM pg_stat_database "
            "WHERE datname IS NOT NULL"
        ).fetchall()
    return {row[0]: dict(zip(PG_COUNTERS, row[1:], strict=True)) for row in rows}


def take_snapshot(server, postmaster: int | None, client_pids, db: Database) -> Snapshot:
    busy, total = procstat.machine_busy()
    return Snapshot(
        t=time.monotonic(),
        server_cpu=server.cpu_seconds(),
        pg_cpu=procstat.tree_seconds(postmaster) if postmaster else 0.0,
        client_cpu={pid: procstat.process_seconds(pid) for pid in client_pids},
        machine_busy=busy,
        machine_total=total,
        pg_stats=pg_stats(db),
    )


def run_measurement(
    *,
    server,
    target: str,
    mode: str,
    level: float,
    procs: int,
    worker_prefix: str,
    slug: str,
    warmup: float,
    duration: float,
    drain: float,
    pool_seconds: float,
    p99_bound_ms: float,
    db: Database,
    postmaster: int | None,
    seed: int,
    on_window_start=None,
) -> dict:
    """Run the clients against ``server`` and return the figures (and the label ids)."""
    if mode == "closed":
        annotators = int(level)
    else:
        annotators = max(10, math.ceil(level * pool_seconds))
    procs = max(1, min(procs, annotators))
    plans = []
    for p in range(procs):
        ids = [f"{worker_prefix}{p}-{i}" for i in range(p, annotators, procs)]
        plans.append(
            clients.ClientPlan(
                target=target,
                base_url=server.client_url(p),
                slug=slug,
                mode=mode,
                worker_ids=ids,
                warmup=warmup,
                duration=duration,
                drain=drain,
                rate=float(level) if mode == "open" else 0.0,
                proc_index=p,
                procs=procs,
                seed=seed,
                entry_limit=900.0 if mode == "closed" else OPEN_LOOP_ENTRY_LIMIT,
            )
        )
    snaps: dict[str, Snapshot] = {}
    load_before = procstat.load_average()

    def window_start(pids):
        snaps["start"] = take_snapshot(server, postmaster, pids, db)
        if on_window_start:
            on_window_start()

    def window_end(pids):
        snaps["end"] = take_snapshot(server, postmaster, pids, db)

    window, results = clients.run_clients(plans, window_start, window_end)
    figures = summarise(window, results, snaps["start"], snaps["end"], db.name, mode, level)
    figures.update(
        {
            "target": target,
            "mode": mode,
            "level": level,
            "annotators": annotators,
            "annotators_entered": sum(result.entered for _, result in results),
            "client_processes": procs,
            "warmup_s": warmup,
            "duration_s": duration,
            "load_average_before": load_before,
        }
    )
    if mode == "open":
        next_p99 = figures["next"]["p99"]
        label_p99 = figures["label"]["p99"]
        started = figures["requests_started_in_window"]
        figures["p99_bound_ms"] = p99_bound_ms
        figures["held"] = bool(
            figures["cycles_per_s"] >= 0.95 * level
            and next_p99 is not None
            and label_p99 is not None
            and next_p99 <= p99_bound_ms
            and label_p99 <= p99_bound_ms
            and figures["errors"] <= 0.01 * max(started, 1)
        )
    labels = {"acked": [], "unknown": [], "refused": []}
    for _, result in results:
        labels["acked"] += result.acked
        labels["unknown"] += result.unknown
        labels["refused"] += result.refused
    return {"figures": figures, "labels": labels}


def summarise(window, results, start: Snapshot, end: Snapshot, dbname: str, mode, level) -> dict:
    w0, w1 = window.start, window.end
    span = w1 - w0
    latencies = {clients.NEXT: [], clients.LABEL: []}
    statuses = {clients.NEXT: {}, clients.LABEL: {}}
    answered_in_window = 0
    started_in_window = 0
    cycles = 0
    no_work = 0
    entry_failures = []
    open_loop = {"cycle": [], "lags": [], "missed": 0, "scheduled": 0}
    for _, result in results:
        no_work += result.no_work
        entry_failures += result.entry_failures
        rows = zip(result.kinds, result.starts, result.ends, result.statuses, strict=True)
        for kind, began, ended, status in rows:
            if w0 <= ended < w1 and isinstance(status, int):
                answered_in_window += 1
                if kind == clients.LABEL and 200 <= status < 300:
                    cycles += 1
            if not w0 <= began < w1:
                continue
            started_in_window += 1
            key = str(status)
            statuses[kind][key] = statuses[kind].get(key, 0) + 1
            if isinstance(status, int):
                latencies[kind].append(ended - began)
        if mode == "open":
            for scheduled, ended in zip(result.scheduled, result.cycle_ends, strict=True):
                if w0 <= scheduled < w1:
                    open_loop["scheduled"] += 1
                    # a failed cycle counts as infinitely slow
                    open_loop["cycle"].append(math.inf if math.isnan(ended) else ended - scheduled)
            open_loop["lags"] += [
                lag
                for lag, s in zip(result.start_lags, result.scheduled, strict=True)
                if w0 <= s < w1
            ]
            open_loop["missed"] += sum(1 for s in result.missed if w0 <= s < w1)

    cpu_span = end.t - start.t
    server_cpu = end.server_cpu - start.server_cpu
    pg_cpu = end.pg_cpu - start.pg_cpu
    client_cpu = {
        pid: end.client_cpu.get(pid, 0) - start.client_cpu.get(pid, 0) for pid in end.client_cpu
    }
    ours = _delta(start.pg_stats.get(dbname, {}), end.pg_stats.get(dbname, {}))
    others = sum(
        _delta(start.pg_stats.get(name, {}), counters).get("xact_commit", 0)
        for name, counters in end.pg_stats.items()
        if name not in (dbname, "postgres")
    )
    xacts = ours.get("xact_commit", 0) + ours.get("xact_rollback", 0)

    def per_cycle(seconds):
        return round(seconds * 1000 / cycles, 2) if cycles else None

    def per_request(seconds):
        return round(seconds * 1000 / answered_in_window, 2) if answered_in_window else None

    cores = os.cpu_count() or 1
    machine = (end.machine_busy - start.machine_busy) / max(
        end.machine_total - start.machine_total, 1e-9
    )
    our_cpu = server_cpu + pg_cpu + sum(client_cpu.values())

    figures = {
        "cycles": cycles,
        "cycles_per_s": round(cycles / span, 1),
        "next": latency_summary(latencies[clients.NEXT]),
        "label": latency_summary(latencies[clients.LABEL]),
        "statuses": {
            "next": statuses[clients.NEXT],
            "label": statuses[clients.LABEL],
        },
        "errors": sum(
            count
            for by_status in statuses.values()
            for key, count in by_status.items()
            if not (key.isdigit() and 200 <= int(key) < 300)
        ),
        "no_work": no_work,
        "entry_failures": entry_failures[:5],
        "cpu_ms_per_cycle": {
            "server": per_cycle(server_cpu),
            "postgres": per_cycle(pg_cpu),
            "client": per_cycle(sum(client_cpu.values())),
        },
        "cpu_ms_per_request": {
            "server": per_request(server_cpu),
            "postgres": per_request(pg_cpu),
        },
        "cpu_share": {  # CPU seconds per second of window (1.0 = one core busy)
            "server": round(server_cpu / cpu_span, 2),
            "postgres": round(pg_cpu / cpu_span, 2),
            "client_total": round(sum(client_cpu.values()) / cpu_span, 2),
            "client_busiest_process": round(max(client_cpu.values(), default=0) / cpu_span, 2),
            "machine_busy": round(machine, 3),
            # everything else on the machine (other users' processes)
            "other_processes": round(max(0.0, machine * cores - our_cpu / cpu_span), 2),
        },
        "postgres": {
            "xacts_per_request": round(xacts / answered_in_window, 2)
            if answered_in_window
            else None,
            "tuples_per_cycle": {
                k: round(ours.get(k, 0) / cycles, 1) if cycles else None
                for k in ("tup_returned", "tup_fetched", "tup_inserted", "tup_updated")
            },
            "blocks_read": ours.get("blks_read", 0),
            "other_databases_xacts_in_window": others,
        },
        "answered_requests_in_window": answered_in_window,
        "requests_started_in_window": started_in_window,
    }
    if mode == "open":
        scheduled = open_loop["scheduled"] + open_loop["missed"]
        figures["open_loop"] = {
            "target_per_s": level,
            "scheduled_in_window": scheduled,
            "missed_starts": open_loop["missed"],
            "cycle_latency_from_schedule": latency_summary(
                [v for v in open_loop["cycle"] if math.isfinite(v)]
            ),
            "failed_cycles": sum(1 for v in open_loop["cycle"] if not math.isfinite(v)),
            "start_lag": latency_summary(open_loop["lags"]),
        }
    return figures


def _delta(before: dict, after: dict) -> dict:
    return {k: after[k] - before.get(k, 0) for k in after}
