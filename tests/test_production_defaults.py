"""Production defaults that the settings, the deploy files and the README must agree on:
how long a request waits for a pooled database connection, and how many gunicorn
workers serve the site."""

import re
import runpy
from pathlib import Path

import yaml

import config.settings

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text()


def test_a_request_waits_at_most_3_s_for_a_pooled_connection(monkeypatch):
    # A database outage then answers 503 within seconds instead of holding every sync
    # worker for 10 s per request.
    monkeypatch.setenv("DATABASE_URL", "postgres://app@db.example:5432/app")
    monkeypatch.setenv("DATABASE_POOL", "1")
    monkeypatch.delenv("DATABASE_POOL_TIMEOUT", raising=False)
    assert config.settings.database_settings()["OPTIONS"]["pool"]["timeout"] == 3.0
    monkeypatch.setenv("DATABASE_POOL_TIMEOUT", "1.5")
    assert config.settings.database_settings()["OPTIONS"]["pool"]["timeout"] == 1.5
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
