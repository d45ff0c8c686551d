"""Jobs that can no longer finish are failed, so none shows ``pending`` or ``running``
for ever: a pending job nobody picked up within ``JOB_PENDING_TIMEOUT_SECONDS`` (its
message was lost with the broker), a running one that has reported no progress for
``JOB_RUNNING_TIMEOUT_SECONDS`` (its worker died). A running job is judged by its last
progress (``Job.last_progress_at``, written with every progress update), not by when it
started: a long job that keeps reporting progress runs as long as it needs. A job run by a
Celery worker also has a heartbeat (``Job.alive_at``, ``core.jobs.heartbeat``): silent for
``JOB_HEARTBEAT_TIMEOUT_SECONDS``, its worker is gone, machine and all, and it fails. Run by the
periodic task ``core.tasks.fail_stale_jobs``, and for one job whenever its status is read,
so the bound holds even while the scheduler is down.

A job split into chunks that workers run in parallel (``core.jobs.chunks``) has no heartbeat
of its own once its chunks are handed out: the same sweep first gives a chunk whose
heartbeat stopped to another worker, and fails the job only when none of its chunks has
run for ``JOB_PENDING_TIMEOUT_SECONDS`` (no worker is left to take them).
"""

import logging
from datetime import timedelta

from django.conf import settings
from django.db.models import Q
from django.utils import timezone

from core.jobs.broker import BROKER_ERRORS
from core.jobs.chunks import requeue_lost_chunks, without_running_chunks
from core.models import Job

logger = logging.getLogger(__name__)

LOST_PENDING = (
    "no worker picked this job up within {seconds} s (the job queue was unavailable or "
    "lost it); nothing was done, start it again"
)
LOST_RUNNING = "this job's worker stopped answering for more than {seconds} s; start it again"
LOST_CHUNKS = (
    "no worker took up this job's parts for more than {seconds} s (no worker is running, "
    "or the job queue lost them); the parts done so far are kept, start it again"
)
LOST_HEARTBEAT = (
    "this job's worker (its process or its machine) stopped: no sign of life for more than "
    "{seconds} s; nothing it did was kept, start it again"
)


def _stale(now) -> dict[str, Q]:
    pending = settings.JOB_PENDING_TIMEOUT_SECONDS
    running = settings.JOB_RUNNING_TIMEOUT_SECONDS
    alive = settings.JOB_HEARTBEAT_TIMEOUT_SECONDS
    return {
        # first: a job with a heartbeat that stopped is told it lost its worker
        LOST_HEARTBEAT.format(seconds=alive): Q(
            state=Job.State.RUNNING, alive_at__lt=now - timedelta(seconds=alive)
        ),
        LOST_PENDING.format(seconds=pending): Q(
            state=Job.State.PENDING, created_at__lt=now - timedelta(seconds=pending)
        ),
        LOST_CHUNKS.format(seconds=pending): Q(
            state=Job.State.RUNNING, last_progress_at__lt=now - timedelta(seconds=pending)
        )
        & without_running_chunks(),
        LOST_RUNNING.format(seconds=running): Q(state=Job.State.RUNNING)
        & (
            Q(last_progress_at__lt=now - timedelta(seconds=running))
            | Q(last_progress_at__isnull=True, started_at__lt=now - timedelta(seconds=running))
        ),
    }


def fail_stale_jobs(jobs=None) -> int:
    """Fail the stale jobs among ``jobs`` (default: all), after giving their lost chunks to
    other workers; returns how many jobs failed."""
    try:
        requeue_lost_chunks(jobs)
    except BROKER_ERRORS as error:  # the chunks stay lost until the broker answers again
        logger.warning("lost chunks not queued again, the broker did not answer: %s", error)
    now = timezone.now()
    queryset = Job.objects.all() if jobs is None else jobs
    failed = 0
    for message, condition in _stale(now).items():
        # one conditional UPDATE: a worker that starts the job meanwhile wins or loses whole
        failed += queryset.filter(condition).update(
            state=Job.State.FAILED, message=message, finished_at=now
        )
    return failed
