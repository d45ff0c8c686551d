"""Counting failed logins in the cache, per account and per client address.

Each counter starts with the first failure and lives ``LOGIN_LOCKOUT_SECONDS``; once it
reaches its limit (``LOGIN_FAILURES_PER_ACCOUNT``, ``LOGIN_FAILURES_PER_ADDRESS``) every
login for that account, or from that address, is refused — the right password too —
until the counter expires. A successful login clears its account's counter. With the
cache unreachable nothing is counted (``core.cache``): logins keep working.
"""

import hashlib

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest

from core.http.client import client_address


def _key(scope: str, value: str) -> str:
    digest = hashlib.sha256(value.strip().lower().encode("utf-8", "replace")).hexdigest()
    return f"login-failures:{scope}:{digest[:32]}"


def _counters(request: HttpRequest | None, username: str | None) -> list[tuple[str, int, str]]:
    """(cache key, limit, what is locked) for the account and the address of a login."""
    counters = []
    if username:
        counters.append((_key("account", username), settings.LOGIN_FAILURES_PER_ACCOUNT, "account"))
    address = client_address(request)
    if address:
        counters.append((_key("address", address), settings.LOGIN_FAILURES_PER_ADDRESS, "address"))
    return counters


def lockout_message(request: HttpRequest | None, username: str | None) -> str | None:
    """Why this login is refused without trying the password, or None."""
    for key, limit, what in _counters(request, username):
        if (cache.get(key) or 0) >= limit:
            minutes = max(1, round(settings.LOGIN_LOCKOUT_SECONDS / 60))
            whose = "this account" if what == "account" else "your network address"
            return (
                f"Too many failed logins for {whose}. Logging in is blocked for up to "
                f"{minutes} minutes after the first failure; wait and try again."
            )
    return None


def record_failure(request: HttpRequest | None, username: str | None) -> None:
    for key, _, _ in _counters(request, username):
        cache.add(key, 0, settings.LOGIN_LOCKOUT_SECONDS)
        try:
            cache.incr(key)
        except ValueError:  # expired between add and incr, or the cache is unreachable
            cache.add(key, 1, settings.LOGIN_LOCKOUT_SECONDS)


def record_success(username: str | None) -> None:
    if username:
        cache.delete(_key("account", username))
