"""Run a few queries on a second database connection while this thread runs others.

PostgreSQL answers each connection from its own server process, so two loads that wait on
the database (an analysis's labels and its scores) take the longer of the two rather than
their sum when each has its connection. Only outside a transaction: a transaction's
uncommitted rows (a test's, or a caller's ``atomic`` block) are not seen from another
connection, and a snapshot is not shared. There, and on other databases, the work runs
in this thread when its result is asked for, with the same result; so it does when the
process's connection pool (``DATABASE_POOL_MAX_SIZE``) has no connection to spare, and
when it had none after all by the time the thread asked (rather than failing the work
after the pool's timeout, the connection's wait is the only time lost).
"""

from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generic, TypeVar

from django.db import OperationalError, connection, connections

__all__ = ["Beside", "beside", "can_run_beside"]

T = TypeVar("T")


class Beside(Generic[T]):
    """``function(*args)``, started on its own connection or deferred to ``result()``."""

    def __init__(self, function: Callable[..., T], args: tuple):
        self._function, self._args = function, args
        self._future: Future | None = None
        if can_run_beside():
            pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="beside")
            self._future = pool.submit(_on_own_connection, function, args)
            pool.shutdown(wait=False)  # the thread ends with its one task

    def result(self) -> T:
        if self._future is not None:
            done = self._future.result()
            if done is not _NO_CONNECTION:
                return done
        return self._function(*self._args)


def can_run_beside() -> bool:
    """Whether work given to ``beside`` runs on a second connection (else it is deferred)."""
    return (
        connection.vendor == "postgresql"
        and not connection.in_atomic_block
        and connection.get_autocommit()
        and _pool_has_room(connection.pool)
    )


def _pool_has_room(pool) -> bool:
    """Whether psycopg's pool of this process (None: a connection each) can give one more."""
    if pool is None:
        return True
    stats = pool.get_stats()
    in_use = stats.get("pool_size", 0) - stats.get("pool_available", 0)
    return stats.get("pool_max", 0) - in_use >= 1


def beside(function: Callable[..., T], *args) -> Beside[T]:
    """Start ``function(*args)`` beside this thread (see the module's docstring)."""
    return Beside(function, args)


# what the thread answers when it got no connection: the caller then does the work
_NO_CONNECTION = object()


def _on_own_connection(function: Callable[..., T], args: tuple):
    try:
        try:
            _connect()
        except OperationalError as error:
            if type(error.__cause__).__name__ == "PoolTimeout":  # psycopg_pool's
                return _NO_CONNECTION
            raise
        return function(*args)
    finally:
        # the thread's connections are its own: closed (or given back to the pool) here,
        # not left for a thread that no longer exists
        connections.close_all()


def _connect() -> None:
    connection.ensure_connection()
