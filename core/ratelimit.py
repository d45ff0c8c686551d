"""A fixed-window counter in the shared cache: how often a key was used this window.

Used to limit how many study entries one client address makes (so one client cannot
mint thousands of "independent" annotators). The cache is Redis when ``REDIS_URL`` is set,
so every web process sees the same counts; an unreachable cache counts nothing (the limit
then does not apply, which is the safe side for workers doing nothing wrong).
"""

import time

from django.core.cache import cache


def hit(scope: str, key: str, window_seconds: int) -> int:
    """Count one use of ``key`` in the current window of ``scope``; returns the count."""
    window = int(time.time() // window_seconds)
    name = f"ratelimit:{scope}:{window}:{key}"
    if cache.add(name, 1, timeout=window_seconds + 5):
        return 1
    try:
        return cache.incr(name)
    except ValueError:  # expired between add and incr: a new window
        cache.add(name, 1, timeout=window_seconds + 5)
        return 1
