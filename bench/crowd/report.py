"""``bench/results/crowd.json`` and ``bench/results/crowd.md`` from the measurements."""

from __future__ import annotations

import json
from pathlib import Path

TARGETS = ("ceiling", "platform")  # measured in this order at every (mode, level)


def best(runs: list[dict]) -> dict | None:
    """The best of K repeats: most cycles/s (closed loop); held, then lowest p99 (open)."""
    if not runs:
        return None
    if runs[0]["figures"]["mode"] == "open":

        def key(run):
            f = run["figures"]
            worst_p99 = max(f["next"]["p99"] or 1e9, f["label"]["p99"] or 1e9)
            return (f.get("held", False), f["cycles_per_s"], -worst_p99)

        return max(runs, key=key)
    return max(runs, key=lambda run: run["figures"]["cycles_per_s"])


def pairs(results: dict) -> list[dict]:
    """One row per (mode, level): the best ceiling and the best platform run."""
    rows = []
    for group in results["measurements"]:
        ceiling = best(group["ceiling"])
        platform = best(group["platform"])
        row = {
            "mode": group["mode"],
            "level": group["level"],
            "ceiling": ceiling,
            "platform": platform,
        }
        if ceiling and platform and ceiling["figures"]["cycles_per_s"]:
            row["ratio"] = round(
                platform["figures"]["cycles_per_s"] / ceiling["figures"]["cycles_per_s"], 3
            )
        rows.append(row)
    return rows


def every_run(results: dict):
    """(group, target, run) for every run measured, the ceiling's before the platform's of
    each (mode, level) group, best or not."""
    for group in results["measurements"]:
        for target in TARGETS:
            for run in group[target]:
                yield group, target, run


def best_runs(results: dict):
    """(row, target, best run) for every (mode, level) row of ``pairs`` and every server
    that has a run, in the order of the tables."""
    for row in pairs(results):
        for target in TARGETS:
            if row[target] is not None:
                yield row, target, row[target]


def contamination_note(results: dict, threshold: float = 0.5) -> str | None:
    """A note naming the windows in which other processes used ``threshold`` cores or more."""
    busy = []
    for group, target, run in every_run(results):
        other = run["figures"]["cpu_share"].get("other_processes", 0)
        if other >= threshold:
            busy.append(f"{group['mode']} {group['level']:g} {target} {other:.2f}")
    if not busy:
        return None
    return (
        f"Other processes on the machine used ≥ {threshold} core in these windows (cores): "
        + "; ".join(busy)
        + ". Their figures are low by an unknown amount; rerun with --repeat 3 on a quiet "
        "machine (--wait-quiet) for firm numbers."
    )


def write_json(results: dict, path: Path) -> None:
    results = dict(results)
    results["summary"] = [
        {
            "mode": row["mode"],
            "level": row["level"],
            "ratio": row.get("ratio"),
            "ceiling": row["ceiling"]["figures"] if row["ceiling"] else None,
            "platform": row["platform"]["figures"] if row["platform"] else None,
            "platform_invariants_ok": (
                row["platform"]["invariants"]["ok"] if row["platform"] else None
            ),
        }
        for row in pairs(results)
    ]
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(results, indent=2, default=str) + "\n")
    tmp.replace(path)


def _fmt(value, digits=1) -> str:
    if value is None:
        return "–"
    if isinstance(value, float):
        return f"{value:.{digits}f}"
    return str(value)


def _lat(summary: dict) -> str:
    return f"{_fmt(summary['p50'])} / {_fmt(summary['p95'])} / {_fmt(summary['p99'])}"


def _errors(figures: dict) -> str:
    bad = []
    for kind, by_status in figures["statuses"].items():
        for status, count in sorted(by_status.items()):
            if not (status.isdigit() and 200 <= int(status) < 300):
                bad.append(f"{kind} {status}×{count}")
    return ", ".join(bad) or "0"


def _invariants(run: dict) -> str:
    inv = run.get("invariants")
    if inv is None:
        return "–"
    if inv.get("ok"):
        return f"ok ({inv['acknowledged']} acked, {inv['unknown_outcome']} in flight)"
    problems = [
        f"{key}={inv[key]}"
        for key in (
            "items_over_n",
            "counted_count_mismatches",
            "reserved_count_mismatches",
            "duplicate_annotator_item_labels",
            "acknowledged_but_missing",
            "stored_but_unacknowledged",
            "refused_but_stored",
        )
        if inv.get(key)
    ]
    return "**FAILED** " + ", ".join(problems)


def render_markdown(results: dict) -> str:
    meta = results["meta"]
    machine = meta["machine"]
    git = meta["git"]
    options = meta["options"]
    sql = results.get("sql_per_request") or {}
    platform_sql = sql.get("platform", {})
    ceiling_sql = sql.get("ceiling", {})
    lines = [
        "# Crowd load benchmark: platform vs. no-database ceiling",
        "",
        f"Generated by `python -m bench.crowd` on {meta['started_at']} "
        f"({meta['elapsed_s']:.0f} s). Each row: the ceiling and the platform measured in "
        f"the same run, alternately (ceiling, platform) per level, best of "
        f"{options['repeat']}. Closed loop: C annotators each looping next → label as fast as "
        f"answered; open loop: cycles started at a fixed rate. Window {options['duration']} s "
        f"after {options['warmup']} s warm-up. Latencies in ms (p50 / p95 / p99).",
        "",
        "| mode | level | server | cycles/s | ratio | next p50/p95/p99 | label p50/p95/p99 "
        "| errors | SQL/next | SQL/label | xacts/req | CPU ms/cycle srv / pg / client | invariants |",
        "|---|---|---|---:|---:|---|---|---|---:|---:|---:|---|---|",
    ]
    for row, target, run in best_runs(results):
        level = f"{row['level']:g} annotators" if row["mode"] == "closed" else f"{row['level']:g}/s"
        f = run["figures"]
        cpu = f["cpu_ms_per_cycle"]
        rate = _fmt(f["cycles_per_s"])
        if f["mode"] == "open":
            rate += " ✓ held" if f.get("held") else " ✗ not held"
        sql_next = (
            ceiling_sql.get("next")
            if target == "ceiling"
            else platform_sql.get("next", {}).get("mean_sql")
        )
        sql_label = (
            ceiling_sql.get("label")
            if target == "ceiling"
            else platform_sql.get("label", {}).get("mean_sql")
        )
        lines.append(
            f"| {row['mode']} | {level} | {target} | {rate} | "
            f"{_fmt(row.get('ratio'), 2) if target == 'platform' else '1'} | "
            f"{_lat(f['next'])} | {_lat(f['label'])} | {_errors(f)} | "
            f"{_fmt(sql_next)} | {_fmt(sql_label)} | {_fmt(f['postgres']['xacts_per_request'], 2)} | "
            f"{_fmt(cpu['server'])} / {_fmt(cpu['postgres'])} / {_fmt(cpu['client'])} | "
            f"{_invariants(run) if target == 'platform' else '–'} |"
        )
    lines += ["", "## Open loop details", ""]
    lines += [
        "| rate | server | pool (entered) | achieved/s | missed starts | cycle p50/p95/p99 (from schedule) "
        "| client start lag p99 | held (≥95 % and p99 ≤ bound) |",
        "|---|---|---:|---:|---:|---|---:|---|",
    ]
    for row, target, run in best_runs(results):
        if row["mode"] != "open":
            continue
        f = run["figures"]
        o = f["open_loop"]
        lines.append(
            f"| {row['level']:g}/s | {target} | {f['annotators']} ({f.get('annotators_entered', '–')}) "
            f"| {_fmt(f['cycles_per_s'])} | {o['missed_starts']} "
            f"| {_lat(o['cycle_latency_from_schedule'])} | {_fmt(o['start_lag']['p99'])} "
            f"| {'yes' if f.get('held') else 'no'} (bound {f['p99_bound_ms']:g} ms) |"
        )
    lines += ["", "## CPU and client load (best runs)", ""]
    lines += [
        "| mode | level | server | server cores | postgres cores | client cores (busiest process) "
        "| other processes' cores | machine busy | CPU ms/request srv / pg | xacts/req "
        "| tuples returned / inserted / updated per cycle |",
        "|---|---|---|---:|---:|---|---:|---:|---|---:|---|",
    ]
    for row, target, run in best_runs(results):
        f = run["figures"]
        share = f["cpu_share"]
        tuples = f["postgres"]["tuples_per_cycle"]
        lines.append(
            f"| {row['mode']} | {row['level']:g} | {target} | {_fmt(share['server'], 2)} "
            f"| {_fmt(share['postgres'], 2)} | {_fmt(share['client_total'], 2)} "
            f"({_fmt(share['client_busiest_process'], 2)}) | {_fmt(share['other_processes'], 2)} "
            f"| {share['machine_busy'] * 100:.0f} % "
            f"| {_fmt(f['cpu_ms_per_request']['server'])} / {_fmt(f['cpu_ms_per_request']['postgres'])} "
            f"| {_fmt(f['postgres']['xacts_per_request'], 2)} "
            f"| {_fmt(tuples['tup_returned'], 0)} / {_fmt(tuples['tup_inserted'])} / {_fmt(tuples['tup_updated'])} |"
        )
    if platform_sql:
        lines += [
            "",
            "## SQL statements per request (platform, in-process count)",
            "",
            "| request | statements (excl. BEGIN/COMMIT/SAVEPOINT) | with transaction control |",
            "|---|---:|---:|",
        ]
        for kind, figures in platform_sql.items():
            lines.append(f"| {kind} | {_fmt(figures['mean_sql'])} | {_fmt(figures['mean'])} |")
        lines += ["", f"Ceiling: next {ceiling_sql.get('next')}, label {ceiling_sql.get('label')}."]
        sizes = sql.get("next_response_bytes") or {}
        if sizes:
            lines.append(
                f"Body of a next answer: platform {sizes.get('platform')} bytes, "
                f"ceiling {sizes.get('ceiling')} bytes."
            )
    profile = results.get("profile")
    if profile and profile.get("by_group"):
        lines += [
            "",
            f"## Where a worker's time goes (py-spy, {profile['note']})",
            "",
        ]
        for group in ("next", "label", "around"):
            g = profile["by_group"].get(group)
            if not g or not g["samples"]:
                continue
            doing = ", ".join(
                f"{name} {share * 100:.0f} %" for name, share in g.get("doing", {}).items()
            )
            lines += [
                f"**{group}** ({_fmt((g['share_of_request_time'] or 0) * 100, 0)} % of in-request samples; {doing})",
                "",
                "| function | cumulative share |",
                "|---|---:|",
            ]
            lines += [
                f"| `{t['function']}` | {t['cumulative_share'] * 100:.0f} % |" for t in g["top"]
            ]
            lines.append("")
    pg = meta.get("postgres_settings", {})
    lines += [
        "",
        "## Setup",
        "",
        f"- Machine: {machine['cores']} cores ({machine['cpu_model']}), {machine['memory_gib']} GiB, "
        f"load average before the run {' '.join(str(v) for v in machine['load_average_before'])}; "
        f"Python {machine['python']}, kernel {machine['kernel']}.",
        f"- Code: commit `{git['commit'][:12]}` ({git['subject']}); "
        + (
            git["source"]
            if git.get("source", "").startswith("git archive")
            else f"the work tree as it was, {git['dirty_files']} files changed from the commit"
        )
        + ".",
        f"- Server: `{meta['server_command']}` (the ceiling: the same with `bench.crowd.ceiling`)"
        + (
            f", {options['web_servers']} such servers of each, as web containers, the "
            "clients' processes spread over them"
            if options.get("web_servers", 1) > 1
            else ""
        )
        + (f"; through PgBouncer ({meta['pgbouncer']})" if meta.get("pgbouncer") else "")
        + "; "
        f"extra environment: {options['env'] or 'none'}; "
        + (
            f"Redis `{options['redis']}` (sessions read from the cache, as in production)"
            if options.get("redis")
            else "no Redis (sessions in the database)"
        )
        + "; database connections: "
        + str(meta.get("database_connections", "as config/settings.py decides"))
        + ".",
        f"- Batch: absolute, N = {options['per_item']}, {meta['batch_items']} items at the end, no consent text "
        f"(annotators still POST the Start form); "
        f"{options.get('past_participants', 0)} past participants entered before the run.",
        f"- Clients: {options['client_procs']} process(es), aiohttp; open-loop pool = rate × "
        f"{options['pool_seconds']} s annotators.",
        "- PostgreSQL: " + ", ".join(f"{k}={v}" for k, v in pg.items()) + ".",
        "",
        "Figures: *cycles/s* = labels answered 2xx in the window per second; *ratio* = "
        "platform / ceiling cycles/s; *SQL/next*, *SQL/label* = statements per request "
        "counted in-process (Django `CaptureQueriesContext`; `pg_stat_statements` is not "
        "loaded); *xacts/req* = PostgreSQL transactions per answered request in the window "
        "(`pg_stat_database`); *CPU ms/cycle* = CPU time of gunicorn (master + workers), of "
        "all PostgreSQL processes, and of the client processes in the window, per cycle; "
        "*invariants*: checked in PostgreSQL after each platform run (see bench/crowd/README.md).",
    ]
    notes = results.get("notes") or []
    if notes:
        lines += ["", "## Notes", ""] + [f"- {note}" for note in notes]
    return "\n".join(lines) + "\n"


def write_markdown(results: dict, path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(render_markdown(results))
