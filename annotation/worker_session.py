"""Which annotator a crowdworker's browser session stands for, per batch.

The entry page stores ``{batch slug: annotator pk}`` in the Django session; the pages
and the JSON API read it back. Crowdworkers have no Django login.
"""

SESSION_KEY = "worker_annotators"


def remember(session, batch_slug: str, annotator_pk: int) -> None:
    annotators = dict(session.get(SESSION_KEY, {}))
    annotators[batch_slug] = annotator_pk
    session[SESSION_KEY] = annotators


def annotator_for_batch(session, batch_slug: str) -> int | None:
    return session.get(SESSION_KEY, {}).get(batch_slug)


def annotator_pks(session) -> set[int]:
    return set(session.get(SESSION_KEY, {}).values())
