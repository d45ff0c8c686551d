"""Which annotator a crowdworker's browser session stands for, per batch.

The entry page stores ``{batch slug: annotator pk}`` in the Django session; the pages
and the JSON API read it back. Crowdworkers have no Django login.
"""

import secrets

SESSION_KEY = "worker_annotators"


def remember(session, batch_slug: str, annotator_pk: int) -> None:
    annotators = dict(session.get(SESSION_KEY, {}))
    annotators[batch_slug] = annotator_pk
    session[SESSION_KEY] = annotators


def annotator_for_batch(session, batch_slug: str) -> int | None:
    return session.get(SESSION_KEY, {}).get(batch_slug)


def annotator_pks(session) -> set[int]:
    return set(session.get(SESSION_KEY, {}).values())


BROWSER_KEY = "worker_browsers"


def browser_key(session, batch_slug: str) -> str:
    """This browser's key for a batch (made on first use): a participation is bound to
    the browser that opened it (``annotation.services.entry``)."""
    keys = dict(session.get(BROWSER_KEY, {}))
    if batch_slug not in keys:
        keys[batch_slug] = secrets.token_urlsafe(24)
        session[BROWSER_KEY] = keys
    return keys[batch_slug]


def browser_keys(session) -> frozenset[str]:
    """Every key this browser holds (without making one): what a label is judged by."""
    return frozenset(session.get(BROWSER_KEY, {}).values())


def held_browser_key(session, batch_slug: str) -> str:
    """This browser's key for a batch, or "" when it has none yet (nothing is made)."""
    return session.get(BROWSER_KEY, {}).get(batch_slug, "")


def forget(session, batch_slug: str) -> None:
    """This browser no longer stands for anyone in the batch (the worker stopped here)."""
    annotators = dict(session.get(SESSION_KEY, {}))
    annotators.pop(batch_slug, None)
    session[SESSION_KEY] = annotators
