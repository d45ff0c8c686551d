"""Django's PostgreSQL backend, with a check of pooled connections that costs nothing.

With ``CONN_HEALTH_CHECKS`` Django has psycopg's pool check a connection before lending
it by sending an empty query: a round trip and a transaction on the server for every
request (``bench/crowd``). ``idle_connection_check`` looks at the socket instead: an
idle connection has nothing to read unless the server ended it (a restart or a
terminated backend sends its farewell and closes), so a readable socket marks a dead
connection, which is closed and replaced before any request uses it. A connection lost
without a word (a network failure) is found by the request that uses it, which answers
``503`` (``core.http.errors``) and gives the broken connection back to be discarded.
"""

import select

import psycopg
from django.db.backends.postgresql import base
from psycopg_pool import ConnectionPool


def idle_connection_check(conn: psycopg.Connection) -> None:
    """Raise (after closing it) when the pooled connection is no longer usable."""
    if conn.closed:
        raise psycopg.OperationalError("the connection is closed")
    # poll, not select: select cannot watch a descriptor numbered 1024 or more, which a
    # process with many open files hands a new connection
    watch = select.poll()
    watch.register(conn.fileno(), select.POLLIN)
    if watch.poll(0):
        conn.close()  # so that the pool discards it instead of lending it again
        raise psycopg.OperationalError("the server ended the connection while it was idle")


class DatabaseWrapper(base.DatabaseWrapper):
    @property
    def pool(self):
        pool = super().pool
        # Django lends the pool its round-trip check with CONN_HEALTH_CHECKS; psycopg's
        # pool keeps its check in ``_check`` (psycopg-pool is pinned in pyproject.toml)
        if pool is not None and pool._check is ConnectionPool.check_connection:
            pool._check = idle_connection_check
        return pool
