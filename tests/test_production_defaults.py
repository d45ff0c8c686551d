"""Production defaults that the settings, the deploy files and the README must agree on:
how long a request waits for a pooled database connection, and how many gunicorn
workers serve the site."""

import re
import runpy
from pathlib import Path

import yaml

import config.settings
from config.database import database_settings

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def _pool_timeout() -> float:
    production = database_settings(config.settings.DATA_DIR, debug=False)
    return production["OPTIONS"]["pool"]["timeout"]


def test_a_request_waits_at_most_3_s_for_a_pooled_connection(monkeypatch):
    # A database outage then answers 503 within seconds instead of holding every sync
    # worker for 10 s per request.
    monkeypatch.setenv("DATABASE_URL", "postgres://app@db.example:5432/app")
    monkeypatch.setenv("DATABASE_POOL", "1")
    monkeypatch.delenv("DATABASE_POOL_TIMEOUT", raising=False)
    assert (
        config.settings.database_settings(config.settings.DATA_DIR, False)["OPTIONS"]["pool"][
            "timeout"
        ]
        == 3.0
    )
    monkeypatch.setenv("DATABASE_POOL_TIMEOUT", "1.5")
    assert (
        config.settings.database_settings(config.settings.DATA_DIR, False)["OPTIONS"]["pool"][
            "timeout"
        ]
        == 1.5
    )
    assert "`DATABASE_POOL_TIMEOUT` 3 s" in README


def test_gunicorn_runs_as_many_workers_as_the_compose_file_says(monkeypatch):
    compose = yaml.safe_load((REPO / "docker-compose.yml").read_text())
    declared = compose["services"]["web"]["environment"]["WEB_CONCURRENCY"]
    compose_default = int(re.fullmatch(r"\$\{WEB_CONCURRENCY:-(\d+)\}", declared).group(1))
    monkeypatch.delenv("WEB_CONCURRENCY", raising=False)
    gunicorn = runpy.run_path(str(REPO / "deploy" / "gunicorn.conf.py"))
    assert gunicorn["workers"] == compose_default == 4
    monkeypatch.setenv("WEB_CONCURRENCY", "7")
    assert runpy.run_path(str(REPO / "deploy" / "gunicorn.conf.py"))["workers"] == 7
    row = next(line for line in README.splitlines() if line.startswith("| `WEB_CONCURRENCY`"))
    assert f"| `{compose_default}`, `60` |" in row


def _setting_in_a_fresh_process(name: str, **environment: str) -> str:
    import os
    import subprocess
    import sys

    env = {
        key: value
        for key, value in os.environ.items()
        if key not in ("DEBUG", name) and not key.startswith("PYTEST")
    }
    env.update(environment)
    code = f"import config.settings as s; print(s.{name})"
    run = subprocess.run(
        [sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, check=True
    )
    return run.stdout.strip()


def test_production_limits_new_entries_per_address_and_the_demo_does_not():
    production = _setting_in_a_fresh_process(
        "ENTRY_RATE_LIMIT_PER_HOUR", DEBUG="0", SECRET_KEY="x" * 50
    )
    assert production == "30"
    assert _setting_in_a_fresh_process("ENTRY_RATE_LIMIT_PER_HOUR") == "0"
    assert (
        'ENTRY_RATE_LIMIT_PER_HOUR="${ENTRY_RATE_LIMIT_PER_HOUR:-0}"'
        in (REPO / "bin" / "run").read_text()
    )
    row = next(line for line in README.splitlines() if "| `ENTRY_RATE_LIMIT_PER_HOUR`" in line)
    assert "`30` with `DEBUG=0`" in row
