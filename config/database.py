"""The settings' database connection and their one way of reading an on/off variable."""

import os
from pathlib import Path

import dj_database_url


def env_flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None:
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def database_settings(data_dir: Path, debug: bool) -> dict:
    """The default database from DATABASE_URL (SQLite in ``data_dir`` without one), with
    the pool, health checks and SQLite locking the platform relies on (README,
    "Deployment")."""
    url = os.environ.get("DATABASE_URL", "").strip()
    if not url:
        data_dir.mkdir(parents=True, exist_ok=True)
        url = f"sqlite:///{data_dir / 'db.sqlite3'}"
    config = dj_database_url.parse(url, conn_max_age=int(os.environ.get("CONN_MAX_AGE", "0")))
    # the production default (DEBUG=0), unless persistent connections are asked for
    pooled = env_flag("DATABASE_POOL", not debug and "CONN_MAX_AGE" not in os.environ)
    if config["ENGINE"] == "django.db.backends.postgresql" and pooled:
        # A new PostgreSQL connection is a new server process: opening one per request
        # cost more database CPU than the request's own statements (bench/crowd). Each
        # web process keeps its connections in psycopg's pool instead; the pool checks a
        # connection before lending it (CONN_HEALTH_CHECKS), so a database restart costs
        # no failed request.
        config["CONN_MAX_AGE"] = 0  # Django's pool replaces persistent connections
        config["CONN_HEALTH_CHECKS"] = env_flag("CONN_HEALTH_CHECKS", True)
        # Django's backend, checking a pooled connection's socket instead of sending it
        # an empty query before each request (core/postgresql/base.py)
        config["ENGINE"] = "core.postgresql"
        config.setdefault("OPTIONS", {})["pool"] = {
            "min_size": int(os.environ.get("DATABASE_POOL_MIN_SIZE", "1")),
            "max_size": int(os.environ.get("DATABASE_POOL_MAX_SIZE", "4")),
            # a request waits at most this long for a connection, then answers 503: short,
            # so that a database outage does not hold every sync worker (README)
            "timeout": float(os.environ.get("DATABASE_POOL_TIMEOUT", "3")),
            "max_lifetime": 3600.0,
        }
    elif config["ENGINE"] == "django.db.backends.postgresql":
        config["CONN_HEALTH_CHECKS"] = env_flag("CONN_HEALTH_CHECKS", config["CONN_MAX_AGE"] > 0)
    if config["ENGINE"] == "django.db.backends.sqlite3":
        # IMMEDIATE transactions take SQLite's write lock at BEGIN, so two threads never
        # both read an item's counters and then race to update them; WAL lets readers
        # proceed while one writer holds the lock.
        config["OPTIONS"] = {
            "transaction_mode": "IMMEDIATE",
            "timeout": 30,
            "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
        }
        # One file per test process: concurrent test runs never share a database.
        config.setdefault("TEST", {})["NAME"] = str(data_dir / f"test-db-{os.getpid()}.sqlite3")
    return config
