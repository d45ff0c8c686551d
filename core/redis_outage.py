"""Whether this process may talk to Redis now: the circuit breaker of every Redis use.

A Redis that is stopped refuses connections at once, but a hung one (frozen, swapping,
a network partition) accepts them and then never answers, so every call waits its whole
socket timeout. One request touches Redis several times (session, rate limit, login
throttle, chart cache, job queue), and a timeout of each would add up to seconds. So the
first call that fails opens the breaker for ``REDIS_RETRY_SECONDS``: meanwhile every
Redis use of this process skips Redis at once (the cache reads as empty, a job is
refused with 503), and the first call after that tries Redis again.
"""

import threading
import time

from django.conf import settings

_lock = threading.Lock()
_open_until = 0.0
_reason = ""


def is_away() -> bool:
    """True while a recent failure says Redis is not answering (skip it)."""
    return time.monotonic() < _open_until


def reason() -> str:
    """The name of the error that opened the breaker (``"TimeoutError"``), or ``""``."""
    return _reason if is_away() else ""


def record_failure(error: BaseException) -> None:
    """Redis did not answer: skip it for ``REDIS_RETRY_SECONDS``."""
    global _open_until, _reason
    with _lock:
        _open_until = time.monotonic() + settings.REDIS_RETRY_SECONDS
        _reason = type(error).__name__


def reset() -> None:
    """Forget any failure (tests; a process that knows Redis is back)."""
    global _open_until, _reason
    with _lock:
        _open_until, _reason = 0.0, ""
