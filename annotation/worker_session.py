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


def only_batch_of(session, annotator_pk: int) -> str | None:
    """The slug of the one batch this session stands for the annotator in (``None``
    when it is none or several)."""
    slugs = [slug for slug, pk in session.get(SESSION_KEY, {}).items() if pk == annotator_pk]
    return slugs[0] if len(slugs) == 1 else None


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


LANGUAGE_KEY = "worker_languages"
LAST_LANGUAGE_KEY = "worker_language"


def remember_language(session, batch_slug: str, language: str) -> None:
    """The participant's language in a batch (stored on their participation at entry),
    kept here so that every later request is answered in it without a query."""
    languages = dict(session.get(LANGUAGE_KEY, {}))
    if languages.get(batch_slug) != language:
        languages[batch_slug] = language
        session[LANGUAGE_KEY] = languages
    if session.get(LAST_LANGUAGE_KEY) != language:
        session[LAST_LANGUAGE_KEY] = language


def language_for_batch(session, batch_slug: str | None) -> str:
    """The language of this browser's participation in a batch; for a request that names
    no batch (an assignment's label or heartbeat), that of the batch entered last."""
    if batch_slug:
        return session.get(LANGUAGE_KEY, {}).get(batch_slug, "")
    return session.get(LAST_LANGUAGE_KEY, "")
