"""Whether the job queue's broker answers (``/healthz``, ``/readyz``).

``/readyz`` asks Redis (``PING``, bounded by the Redis timeouts of the settings) unless
this process saw it fail a moment ago (``core.redis_outage``). ``/healthz`` never waits on
Redis: it says what this process last saw, and starts a new ``PING`` in the background
when that is older than ``PROBE_INTERVAL_S``, for the next check to read.
"""

import threading
import time

from celery import current_app
from django.conf import settings
from kombu.exceptions import KombuError
from redis import Redis
from redis.exceptions import RedisError

from core import redis_outage

# What publishing raises when the broker is down or does not answer in time.
BROKER_ERRORS = (KombuError, RedisError, OSError, TimeoutError)

IN_PROCESS = "in-process"
PROBE_INTERVAL_S = 2.0

_clients: dict[str, Redis] = {}
_last_seen = {"status": "not asked yet", "at": -PROBE_INTERVAL_S}
_probe_lock = threading.Lock()


def _broker_url() -> str | None:
    conf = current_app.conf
    url = str(conf.broker_url or "")
    if conf.task_always_eager or not url.startswith(("redis://", "rediss://")):
        return None
    return url


def _ping(url: str) -> str:
    client = _clients.get(url)
    if client is None:
        client = Redis.from_url(
            url,
            socket_connect_timeout=settings.REDIS_CONNECT_TIMEOUT_SECONDS,
            socket_timeout=settings.REDIS_SOCKET_TIMEOUT_SECONDS,
            retry=None,
        )
        _clients[url] = client
    try:
        client.ping()
    except (RedisError, OSError) as error:
        redis_outage.record_failure(error)
        status = f"unavailable: {type(error).__name__}"
    else:
        status = "ok"
    _last_seen.update(status=status, at=time.monotonic())
    return status


def broker_status() -> str:
    """``"ok"``, ``"in-process"`` (no broker: jobs run in the web process) or
    ``"unavailable: <reason>"``, asking Redis (at most the Redis timeouts)."""
    url = _broker_url()
    if url is None:
        return IN_PROCESS
    if redis_outage.is_away():
        return f"unavailable: {redis_outage.reason()}"
    return _ping(url)


def last_broker_status() -> str:
    """What this process last saw of the broker, without waiting for it; a ``PING`` in the
    background refreshes it when it is older than ``PROBE_INTERVAL_S``."""
    url = _broker_url()
    if url is None:
        return IN_PROCESS
    if redis_outage.is_away():
        return f"unavailable: {redis_outage.reason()}"
    if time.monotonic() - _last_seen["at"] >= PROBE_INTERVAL_S and _probe_lock.acquire(False):

        def probe():
            try:
                _ping(url)
            finally:
                _probe_lock.release()

        threading.Thread(None, probe, "broker-probe", daemon=True).start()
    return _last_seen["status"]
