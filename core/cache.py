"""Django's Redis cache, made harmless when Redis is down.

Everything this project keeps in the cache can be recomputed or forgotten (rendered
charts, counts of failed logins, sessions written through to the database), so an
unreachable Redis must slow nothing down and break nothing: reads miss, writes are
dropped, and one warning a minute is logged. A call that fails opens the breaker of
``core.redis_outage``: until it closes, calls skip Redis at once instead of each waiting
for its socket timeout (a hung Redis accepts connections and never answers).

A write that was dropped would leave the older value in Redis to be read once it is back
(a session changed during the outage, read again from the stale cache copy). So the keys
of dropped writes are remembered, a bounded number of them, and deleted first when Redis
answers again.
"""

import logging
import threading
import time

from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

from core import redis_outage

logger = logging.getLogger(__name__)

OUTAGE_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError)
WARNING_INTERVAL_S = 60.0
# keys whose write was dropped, deleted when Redis is back (beyond this many: all are
# forgotten, and only their expiry bounds how long a stale copy may be read)
MAX_DROPPED_KEYS = 10_000


class RedisAway(Exception):
    """The breaker is open: Redis was not asked."""


class ClientPerPool(RedisCacheClient):
    """Django's Redis cache client, keeping one ``redis.Redis`` per connection pool.

    Django's makes a new ``redis.Redis`` for every operation, and redis-py builds its
    table of response callbacks anew each time: on the crowd's hot path (a session read
    per request) that was about a tenth of a millisecond of CPU per call
    (``bench/crowd``). A ``redis.Redis`` is safe to share between threads: each command
    takes a connection from the pool."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._clients = {}

    def get_client(self, key=None, *, write=False):
        index = self._get_connection_pool_index(write)
        client = self._clients.get(index)
        if client is None:
            pool = self._get_connection_pool(write)
            client = self._clients.setdefault(index, self._client(connection_pool=pool))
        return client


class ResilientRedisCache(RedisCache):
    """``RedisCache`` whose operations act as on an empty cache while Redis is away."""

    _last_warning = 0.0
    _dropped: set[str] = set()
    _dropped_lock = threading.Lock()

    def __init__(self, server, params):
        super().__init__(server, params)
        self._class = ClientPerPool

    def _outage(self, operation: str, error: Exception):
        if not isinstance(error, RedisAway):
            redis_outage.record_failure(error)
        now = time.monotonic()
        if now - ResilientRedisCache._last_warning >= WARNING_INTERVAL_S:
            ResilientRedisCache._last_warning = now
            logger.warning("cache unavailable (%s): %s", operation, error)

    def _call(self, operation, *args):
        """Run ``operation`` unless the breaker is open; first delete the keys of writes
        dropped during an outage, so that no stale copy is read."""
        if redis_outage.is_away():
            raise RedisAway("Redis was not answering a moment ago")
        if ResilientRedisCache._dropped:
            with ResilientRedisCache._dropped_lock:
                keys, ResilientRedisCache._dropped = ResilientRedisCache._dropped, set()
            try:
                self._cache.delete_many(list(keys))
            except OUTAGE_ERRORS:
                self._remember_dropped(keys)
                raise
        return operation(*args)

    def _remember_dropped(self, keys) -> None:
        with ResilientRedisCache._dropped_lock:
            ResilientRedisCache._dropped.update(keys)
            if len(ResilientRedisCache._dropped) > MAX_DROPPED_KEYS:
                ResilientRedisCache._dropped = set()

    def _drop(self, keys, version) -> None:
        self._remember_dropped(self.make_and_validate_key(key, version=version) for key in keys)

    def get(self, key, default=None, version=None):
        try:
            return self._call(super().get, key, default, version)
        except (*OUTAGE_ERRORS, RedisAway) as error:
            self._outage("get", error)
            return default

    def get_many(self, keys, version=None):
        try:
            return self._call(super().get_many, keys, version)
        except (*OUTAGE_ERRORS, RedisAway) as error:
            self._outage("get_many", error)
            return {}

    def has_key(self, key, version=None):
        try:
            return self._call(super().has_key, key, version)
        except (*OUTAGE_ERRORS, RedisAway) as error:
            self._outage("has_key", error)
            return False

    def add(self, key, value, timeout=None, version=None):
        try:
            return self._call(super().add, key, value, timeout, version)
        except (*OUTAGE_ERRORS, RedisAway) as error:
            self._outage("add", error)
            return False

    def set(self, key, value, timeout=None, version=None):
        try:
            self._call(super().set, key, value, timeout, version)
        except (*OUTAGE_ERRORS, RedisAway) as error:
            self._outage("set", error)
            self._drop([key], version)

    def set_many(self, data, timeout=None, version=None):
        try:
            return self._call(super().set_many, data, timeout, version)
        except (*OUTAGE_ERRORS, RedisAway) as error:
            self._outage("set_many", error)
            self._drop(list(data), version)
            return list(data)

    def touch(self, key, timeout=None, version=None):
        try:
            return self._call(super().touch, key, timeout, version)
        except (*OUTAGE_ERRORS, RedisAway) as error:
            self._outage("touch", error)
            return False

    def incr(self, key, delta=1, version=None):
        try:
            return self._call(super().incr, key, delta, version)
        except (*OUTAGE_ERRORS, RedisAway) as error:
            self._outage("incr", error)
            raise ValueError(f"cache unavailable, {key!r} not counted") from error

    def delete(self, key, version=None):
        try:
            return self._call(super().delete, key, version)
        except (*OUTAGE_ERRORS, RedisAway) as error:
            self._outage("delete", error)
            self._drop([key], version)
            return False

    def delete_many(self, keys, version=None):
        try:
            return self._call(super().delete_many, keys, version)
        except (*OUTAGE_ERRORS, RedisAway) as error:
            self._outage("delete_many", error)
            self._drop(list(keys), version)
            return False

    def clear(self):
        try:
            return self._call(super().clear)
        except (*OUTAGE_ERRORS, RedisAway) as error:
            self._outage("clear", error)
            return False
