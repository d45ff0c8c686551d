"""Django's Redis cache, made harmless when Redis is down.

Everything this project keeps in the cache can be recomputed or forgotten (rendered
charts, counts of failed logins), so an unreachable Redis must slow nothing down and
break nothing: reads miss, writes are dropped, and one warning a minute is logged.
"""

import logging
import time

from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

OUTAGE_ERRORS = (RedisConnectionError, RedisTimeoutError, OSError)
WARNING_INTERVAL_S = 60.0


class ResilientRedisCache(RedisCache):
    """``RedisCache`` whose operations act as on an empty cache while Redis is away."""

    _last_warning = 0.0

    def _outage(self, operation: str, error: Exception):
        now = time.monotonic()
        if now - ResilientRedisCache._last_warning >= WARNING_INTERVAL_S:
            ResilientRedisCache._last_warning = now
            logger.warning("cache unavailable (%s): %s", operation, error)

    def get(self, key, default=None, version=None):
        try:
            return super().get(key, default, version)
        except OUTAGE_ERRORS as error:
            self._outage("get", error)
            return default

    def get_many(self, keys, version=None):
        try:
            return super().get_many(keys, version)
        except OUTAGE_ERRORS as error:
            self._outage("get_many", error)
            return {}

    def has_key(self, key, version=None):
        try:
            return super().has_key(key, version)
        except OUTAGE_ERRORS as error:
            self._outage("has_key", error)
            return False

    def add(self, key, value, timeout=None, version=None):
        try:
            return super().add(key, value, timeout, version)
        except OUTAGE_ERRORS as error:
            self._outage("add", error)
            return False

    def set(self, key, value, timeout=None, version=None):
        try:
            super().set(key, value, timeout, version)
        except OUTAGE_ERRORS as error:
            self._outage("set", error)

    def set_many(self, data, timeout=None, version=None):
        try:
            return super().set_many(data, timeout, version)
        except OUTAGE_ERRORS as error:
            self._outage("set_many", error)
            return list(data)

    def touch(self, key, timeout=None, version=None):
        try:
            return super().touch(key, timeout, version)
        except OUTAGE_ERRORS as error:
            self._outage("touch", error)
            return False

    def incr(self, key, delta=1, version=None):
        try:
            return super().incr(key, delta, version)
        except OUTAGE_ERRORS as error:
            self._outage("incr", error)
            raise ValueError(f"cache unavailable, {key!r} not counted") from error

    def delete(self, key, version=None):
        try:
            return super().delete(key, version)
        except OUTAGE_ERRORS as error:
            self._outage("delete", error)
            return False

    def delete_many(self, keys, version=None):
        try:
            return super().delete_many(keys, version)
        except OUTAGE_ERRORS as error:
            self._outage("delete_many", error)
            return False

    def clear(self):
        try:
            return super().clear()
        except OUTAGE_ERRORS as error:
            self._outage("clear", error)
            return False
