"""The pooled connections' check (core/postgresql/base.py): a connection the server ended
while it sat in the pool is found and replaced before a request uses it, and a healthy
one is lent without a round trip."""

import time

import psycopg
import pytest
from django.db import connection

from core.postgresql.base import DatabaseWrapper, idle_connection_check


@pytest.fixture
def dsn():
    if connection.vendor != "postgresql":
        pytest.skip("the pool check is PostgreSQL's")
    params = connection.get_connection_params()
    return {k: params[k] for k in ("dbname", "user", "host", "port") if params.get(k)}


def _server_pid(conn) -> int:
    return conn.info.backend_pid


@pytest.mark.django_db
def test_a_connection_the_server_ended_is_closed_and_refused(dsn):
    pooled = psycopg.connect(**dsn, autocommit=True)
    idle_connection_check(pooled)  # healthy: nothing raised
    with psycopg.connect(**dsn, autocommit=True) as admin:
        admin.execute("SELECT pg_terminate_backend(%s)", [_server_pid(pooled)])
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            idle_connection_check(pooled)
        except psycopg.OperationalError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("the ended connection still passed the check")
    assert pooled.closed  # closed, so that the pool discards it


@pytest.mark.django_db
def test_a_healthy_connection_is_lent_without_a_query(dsn, monkeypatch):
    with psycopg.connect(**dsn, autocommit=True) as pooled:

        def no_round_trip(*args, **kwargs):
            raise AssertionError("the check sent the server something")

        monkeypatch.setattr(pooled, "execute", no_round_trip)
        monkeypatch.setattr(pooled, "cursor", no_round_trip)
        for _ in range(50):
            idle_connection_check(pooled)
        monkeypatch.undo()
        assert not pooled.closed and pooled.execute("SELECT 1").fetchone() == (1,)


def test_the_backend_lends_the_pool_this_check(settings):
    if connection.vendor != "postgresql":
        pytest.skip("the pool check is PostgreSQL's")
    settings_dict = {
        **connection.settings_dict,
        "ENGINE": "core.postgresql",
        "CONN_HEALTH_CHECKS": True,
        "CONN_MAX_AGE": 0,
        "OPTIONS": {"pool": {"min_size": 0, "max_size": 1}},
    }
    wrapper = DatabaseWrapper(settings_dict, alias="pool-check")
    try:
        assert wrapper.pool._check is idle_connection_check
    finally:
        wrapper.close_pool()


@pytest.mark.django_db
def test_a_connection_on_a_high_descriptor_is_checked_too(dsn):
    """A process with many open files gets descriptors past 1024, which ``select`` cannot
    watch (it raises, and every connection would look broken)."""
    import os
    import resource

    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    wanted = 1200
    if soft < wanted:
        if hard != resource.RLIM_INFINITY and hard < wanted:
            pytest.skip(f"the process may open only {hard} files")
        resource.setrlimit(resource.RLIMIT_NOFILE, (wanted, hard))
    fillers = []
    try:
        while not fillers or fillers[-1] < 1030:
            fillers.append(os.open(os.devnull, os.O_RDONLY))
        with psycopg.connect(**dsn, autocommit=True) as pooled:
            assert pooled.fileno() >= 1024
            idle_connection_check(pooled)  # healthy: nothing raised
            assert not pooled.closed
    finally:
        for descriptor in fillers:
            os.close(descriptor)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
