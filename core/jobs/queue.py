"""Starting a job: record it, then hand it to Celery once the transaction commits.

Handing it over needs the broker (Redis) when ``REDIS_URL`` is set. If the broker does
not answer within its timeouts (``REDIS_*_TIMEOUT_SECONDS``, about a second in all), or
another call of this process found Redis not answering a moment ago
(``core.redis_outage``), the job is marked
``failed`` with a message saying so, and ``start_job`` raises ``TemporarilyUnavailable``
(503 with ``Retry-After`` on the API): a request never hangs on a broker outage and no
job waits for ever. A job whose message was accepted but lost (Redis restarted without
it) is failed by ``core.jobs.staleness`` once it has waited ``JOB_PENDING_TIMEOUT_SECONDS``.
"""

import logging
from collections.abc import Callable

from django.db import transaction

from core import audit, redis_outage
from core.audit import Actor
from core.errors import TemporarilyUnavailable
from core.jobs.broker import BROKER_ERRORS
from core.jobs.execution import record_failure
from core.jobs.execution import run_job as execute_job
from core.jobs.kinds import job_kind
from core.models import Job
from core.tasks import run_job

logger = logging.getLogger(__name__)

BROKER_RETRY_AFTER_SECONDS = 30


def start_job(
    kind: str,
    subject,
    params: dict | None = None,
    user=None,
    *,
    guard: Callable[[], None] | None = None,
) -> Job:
    """Record a job of ``kind`` about ``subject`` (a model instance, or None) and queue it.

    ``guard`` runs first, in the transaction that records the job: it may lock rows and
    raise to refuse the job (e.g. one running job per subject), and the lock holds until the
    job is recorded. The request is recorded in the subject's audit trail
    (``"<kind>.requested"``). Raises ``TemporarilyUnavailable`` when the job could not be
    queued (it is then ``failed``, with the reason in its message).
    """
    if job_kind(kind) is None:
        raise ValueError(f"no runner registered for job kind {kind!r}")
    with transaction.atomic():
        if guard is not None:
            guard()
        job = Job.objects.create(
            kind=kind,
            subject=subject,
            params=params or {},
            created_by=user if user is not None and user.is_authenticated else None,
        )
        audit.record(
            f"{kind}.requested",
            subject=subject,
            actor=Actor.of(user),
            changes={"job": str(job.pk), **_public(params or {})},
        )
    refused: list[str] = []
    # Outside a transaction this runs at once; inside one, when it commits.
    transaction.on_commit(lambda: _enqueue(job, refused))
    if refused:
        raise TemporarilyUnavailable(refused[0], retry_after=BROKER_RETRY_AFTER_SECONDS)
    job.refresh_from_db()
    return job


def _enqueue(job: Job, refused: list[str]) -> None:
    try:
        if not run_job.app.conf.task_always_eager and redis_outage.is_away():
            reason = redis_outage.reason() or "not answering"
        else:
            # No result is kept in the broker: the Job row holds the state and the outcome.
            run_job.apply_async((str(job.pk),), ignore_result=True)
            return
    except BROKER_ERRORS as error:
        redis_outage.record_failure(error)
        logger.warning("job %s not queued, the broker did not answer: %s", job.pk, error)
        reason = type(error).__name__
    message = (
        f"job {job.pk} was not started: the job queue (Redis) did not answer "
        f"({reason}). Nothing was done; try again in a minute."
    )
    record_failure(job, message)
    refused.append(message)


def _public(params: dict) -> dict:
    """Job parameters worth recording (internal file names of stored uploads are not)."""
    return {name: value for name, value in params.items() if name != "stored_file"}


def run_now(kind: str, subject, params: dict, actor: Actor | None = None) -> Job:
    """Record a ``kind`` job about ``subject`` and run it in this process, whatever the queue;
    returns the finished (or failed) job.

    Recorded and audited like a job started from a page, so that a command's (or the demo's)
    analysis appears on the subject's page like one started there; never handed to a broker,
    as the caller waits for the outcome anyway."""
    with transaction.atomic():
        job = Job.objects.create(
            kind=kind,
            subject=subject,
            params=params,
            created_by=actor.user if actor else None,
        )
        audit.record(
            f"{kind}.requested",
            subject=subject,
            actor=actor,
            changes={"job": str(job.pk), **params},
        )
    return execute_job(str(job.pk))
