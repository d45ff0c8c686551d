"""Jobs whose work splits into parts that any number of Celery workers run in parallel.

A kind declares a ``ChunkedWork`` (``register_chunked_job_kind``) of three functions:

* ``plan(job) -> Plan``: run once, where the job starts; prepares what the parts share and
  says what each part covers (``Plan.parts``, JSON specs: a row range, a query range) and
  what the assembly needs (``Plan.final``). Parts done by an earlier run may be left out.
* ``run_part(job, spec)``: computes one part and stores its result atomically, so that a
  part run twice (its worker died after storing it) stores the same result again.
* ``assemble(job, final_spec, progress) -> (result, result file)``: once every part is done.

The plan is recorded as ``core.JobChunk`` rows, one per part and a ``final`` one for the
assembly. ``Job.total`` is the number of parts and ``Job.progress`` the parts done.

**In a Celery worker** (``REDIS_URL`` set) the job records its chunks, queues
``core.jobs.run_chunk`` messages (on the kind's ``queue``, else the default one) and leaves
the job ``running``. A message takes the lowest part nobody holds (a conditional
``UPDATE``: never two tasks on one part), runs it with a heartbeat on its row, marks it
done, queues one more message while parts wait untaken — so a job keeps at most
``JOB_CHUNK_MESSAGES`` messages in the queue, and a job queued after a corpus of a
thousand parts waits behind that many, not behind all of them — then takes the final
chunk if every part is done: the last part to finish assembles
the result and the job succeeds. **Elsewhere** (no broker, or ``run_now``) the runner
takes the same chunks one after another in this process, so both give the same result.

**Lost work is redone, one chunk at a time.** A chunk is taken again when its worker's
child process died (the worker's main process reports it: ``requeue_chunk_of_lost_task``)
or its heartbeat is older than ``JOB_HEARTBEAT_TIMEOUT_SECONDS`` (the whole worker or its
machine died: ``requeue_lost_chunks``, run by the periodic sweep and whenever the job's
status is read), each time with a new message; a chunk taken ``MAX_ATTEMPTS`` times fails
the job (it kills its workers: too large for their memory). A chunked job with no chunk
running and no progress for ``JOB_PENDING_TIMEOUT_SECONDS`` has no worker left to take its
chunks, and fails like a pending job nobody picked up (``core.jobs.staleness``).
Messages are acknowledged late (after the task), so a worker that dies takes no queued
message with it, only the ones it was running.
"""

import logging
import os
import socket
import time
import uuid
from collections.abc import Callable
from contextlib import nullcontext
from dataclasses import dataclass, field
from datetime import timedelta

from billiard.exceptions import WorkerLostError
from celery import shared_task
from celery.signals import task_failure
from django.conf import settings
from django.db import transaction
from django.db.models import Exists, F, OuterRef, Q
from django.utils import timezone

from core.errors import ServiceError
from core.jobs.execution import JobProgress, fail_running_job, record_success
from core.jobs.heartbeat import JobHeartbeat
from core.jobs.kinds import job_kind, register_job_kind
from core.models import Job, JobChunk

logger = logging.getLogger(__name__)

TASK_NAME = "core.jobs.run_chunk"
MAX_ATTEMPTS = 3
TOO_MANY_ATTEMPTS = (
    "part {index} of this job was started {attempts} times and its worker died each time "
    "(killed, or out of memory); the parts done so far are kept. Start it again with more "
    "memory per worker"
)


@dataclass(frozen=True)
class Plan:
    """What the job's parts cover (one JSON spec each, in order) and what its assembly needs."""

    parts: list[dict]
    final: dict = field(default_factory=dict)


class ChunkedWork:
    """How a kind's job splits into parts (see the module doc). ``queue()`` names the Celery
    queue of its chunk messages (None: the default queue); a job for which ``splits(job)``
    is false runs whole, by the kind's runner, wherever it starts."""

    def __init__(
        self,
        plan: Callable[[Job], Plan],
        run_part: Callable[[Job, dict], None],
        assemble: Callable[[Job, dict, JobProgress], tuple[dict, str]],
        queue: Callable[[], str | None] = lambda: None,
        splits: Callable[[Job], bool] = lambda job: True,
    ):
        self.plan = plan
        self.run_part = run_part
        self.assemble = assemble
        self.queue = queue
        self.splits = splits  # whether this job of the kind splits (else its runner runs it)

    def runner(self, job: Job, progress: JobProgress) -> tuple[dict, str]:
        """The whole job in this process: plan, every part in order, then the assembly."""
        _record_plan(job, self.plan(job))
        token = f"here-{uuid.uuid4().hex}"
        while (chunk := take_chunk(job.pk, token, alive=False)) is not None:
            outcome = _run(self, job, chunk, token, progress, heartbeat=False)
            if chunk.final:
                return outcome
        raise ServiceError(f"job {job.pk} stopped before its parts were done")

    def dispatch(self, job: Job) -> None:
        """In a worker: record the plan and queue the first messages (``JOB_CHUNK_MESSAGES``
        at most); the workers finish."""
        parts = _record_plan(job, self.plan(job))
        messages = max(1, min(parts, settings.JOB_CHUNK_MESSAGES))
        transaction.on_commit(lambda: wake(job.pk, self.queue(), messages))


def register_chunked_job_kind(name: str, *, can_view: Callable[[object], bool], work: ChunkedWork):
    """Register ``work`` for jobs of kind ``name`` (``core.jobs.kinds``)."""
    register_job_kind(name, can_view=can_view, chunked=work)(work.runner)


def _record_plan(job: Job, plan: Plan) -> int:
    """The job's chunks as rows (its earlier rows, if any, replaced); returns the parts."""
    parts = len(plan.parts)
    rows = [JobChunk(job=job, index=i, spec=spec) for i, spec in enumerate(plan.parts)]
    rows.append(JobChunk(job=job, index=parts, spec=plan.final, final=True))
    with transaction.atomic():
        JobChunk.objects.filter(job=job).delete()
        JobChunk.objects.bulk_create(rows, batch_size=1000)
        Job.objects.filter(pk=job.pk).update(
            progress=0, total=parts, last_progress_at=timezone.now(), message=_done_text(0, parts)
        )
    return parts


def _done_text(done: int, parts: int) -> str:
    return f"{done:,} of {parts:,} parts done"


def wake(job_id, queue: str | None, count: int = 1) -> None:
    """Queue ``count`` messages that each take one chunk of the job."""
    for _ in range(count):
        run_chunk.apply_async((str(job_id),), queue=queue, ignore_result=True)


# --------------------------------------------------------------------------- taking a chunk


def _takeable(now) -> Q:
    lost = now - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_SECONDS)
    return Q(state=JobChunk.State.PENDING) | Q(state=JobChunk.State.RUNNING, alive_at__lt=lost)


def _worker_name() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"[:200]


def _take(chunk: JobChunk, claim: str, now, alive: bool) -> bool:
    """Take one chunk (a conditional UPDATE: of two tasks at once, one wins). Taken with
    ``alive`` (in a worker, with a heartbeat) it can be found lost; without (in-process),
    never."""
    taken = (
        JobChunk.objects.filter(pk=chunk.pk)
        .filter(_takeable(now))
        .update(
            state=JobChunk.State.RUNNING,
            claim=claim,
            attempts=F("attempts") + 1,
            alive_at=now if alive else None,
            worker=_worker_name(),
        )
    )
    if taken:
        chunk.refresh_from_db()
    return bool(taken)


def take_chunk(job_id, claim: str, *, alive: bool = True, parts: bool = True) -> JobChunk | None:
    """The next chunk of a running job for the task ``claim``: the lowest part nobody holds
    (unless not ``parts``), else the final chunk once every part is done, else None. A chunk
    taken more than ``MAX_ATTEMPTS`` times fails the job instead."""
    if not Job.objects.filter(pk=job_id, state=Job.State.RUNNING).exists():
        return None
    chunks = JobChunk.objects.filter(job_id=job_id)
    taken = None
    while parts and taken is None:
        now = timezone.now()
        candidates = list(chunks.filter(final=False).filter(_takeable(now)).order_by("index")[:8])
        if not candidates:
            break
        taken = next((chunk for chunk in candidates if _take(chunk, claim, now, alive)), None)
    if taken is None and not chunks.filter(final=False).exclude(state=JobChunk.State.DONE).exists():
        now = timezone.now()
        final = chunks.filter(final=True).filter(_takeable(now)).first()
        if final is not None and _take(final, claim, now, alive):
            taken = final
    if taken is not None and taken.attempts > MAX_ATTEMPTS:
        fail_running_job(
            job_id, TOO_MANY_ATTEMPTS.format(index=taken.index, attempts=taken.attempts - 1)
        )
        return None
    return taken


# --------------------------------------------------------------------------- running it


class ChunkHeartbeat(JobHeartbeat):
    """A running chunk's sign of life (``JobChunk.alive_at``), while its task holds it."""

    def __init__(self, chunk: JobChunk, claim: str):
        super().__init__(chunk.job_id)
        self.chunk_id, self.claim = chunk.pk, claim

    def write(self) -> None:
        JobChunk.objects.filter(
            pk=self.chunk_id, claim=self.claim, state=JobChunk.State.RUNNING
        ).update(alive_at=timezone.now())


def _run(work: ChunkedWork, job: Job, chunk: JobChunk, claim: str, progress, *, heartbeat: bool):
    """Compute a taken chunk and record it done; the final chunk's outcome is returned (and,
    in a worker, recorded as the job's success)."""
    started = time.perf_counter()
    with ChunkHeartbeat(chunk, claim) if heartbeat else nullcontext():
        if chunk.final:
            result, result_path = work.assemble(job, chunk.spec, progress)
        else:
            work.run_part(job, chunk.spec)
    seconds = time.perf_counter() - started
    now = timezone.now()
    with transaction.atomic():
        JobChunk.objects.filter(pk=chunk.pk, claim=claim, state=JobChunk.State.RUNNING).update(
            state=JobChunk.State.DONE, finished_at=now, seconds=seconds
        )
        if chunk.final:
            if heartbeat:
                record_success(job.pk, result, result_path)
            return result, result_path
        parts = JobChunk.objects.filter(job_id=job.pk, final=False)
        done = parts.filter(state=JobChunk.State.DONE).count()
        total = parts.count()
        Job.objects.filter(pk=job.pk, state=Job.State.RUNNING).update(
            progress=done, last_progress_at=now, message=_done_text(done, total)
        )
    return None


@shared_task(name=TASK_NAME, ignore_result=True, bind=True, acks_late=True)
def run_chunk(self, job_id: str) -> str:
    """Take one part of the job and run it; then the assembly, if every part is done."""
    claim = self.request.id or uuid.uuid4().hex
    in_worker = not (self.request.is_eager or self.request.called_directly)
    job = Job.objects.filter(pk=job_id).first()
    kind = job_kind(job.kind) if job is not None else None
    if kind is None or kind.chunked is None:
        return "no such chunked job"
    outcome = "nothing to take"
    try:
        # a part, then the assembly if every part is done now (this one was the last)
        for parts in (True, False):
            chunk = take_chunk(job.pk, claim, alive=in_worker, parts=parts)
            if chunk is None:
                break
            _run(kind.chunked, job, chunk, claim, JobProgress(job), heartbeat=in_worker)
            outcome = "assembled" if chunk.final else "part done"
            if chunk.final:
                break
            if in_worker and _untaken_parts(job.pk):
                _queue_successor(job.pk, kind.chunked.queue())
    except ServiceError as error:  # the input was refused: say why, no traceback
        fail_running_job(job.pk, str(error), getattr(error, "problems", None))
        return "failed"
    except Exception as error:  # recorded for the user; the traceback goes to the log
        logger.exception("job %s: a chunk failed", job_id)
        fail_running_job(job.pk, f"{type(error).__name__}: {error}")
        return "failed"
    return outcome


def _queue_successor(job_id, queue: str | None) -> None:
    """One more message for the job's untaken parts. The broker not answering fails no
    job: the job's other messages queue theirs, and a job left with parts but no message
    fails as one nobody picked up (``core.jobs.staleness``)."""
    try:
        wake(job_id, queue)
    except Exception:
        logger.warning("job %s: the next part's message was not queued", job_id, exc_info=True)


def _untaken_parts(job_id) -> bool:
    return JobChunk.objects.filter(
        job_id=job_id, final=False, state=JobChunk.State.PENDING
    ).exists()


# --------------------------------------------------------------------------- lost chunks


def _release(chunks, silent_since=None) -> list[tuple]:
    """Set running chunks back to pending, each only while the same task holds it (and, with
    ``silent_since``, has said nothing since); returns (job id, queue) for each one."""
    released = []
    for chunk in chunks:
        held = JobChunk.objects.filter(pk=chunk.pk, state=JobChunk.State.RUNNING, claim=chunk.claim)
        if silent_since is not None:
            held = held.filter(alive_at__lt=silent_since)
        if held.update(state=JobChunk.State.PENDING, claim="", alive_at=None):
            kind = job_kind(chunk.job.kind)
            released.append((chunk.job_id, kind.chunked.queue() if kind and kind.chunked else None))
    return released


def requeue_lost_chunks(jobs=None) -> int:
    """Give the chunks of running ``jobs`` (default: all) whose heartbeat stopped to another
    worker (pending again, with a new message); returns how many. Nothing to do without a
    broker: a job run in-process takes its chunks with no heartbeat, and none is lost."""
    if run_chunk.app.conf.task_always_eager:
        return 0
    now = timezone.now()
    lost = now - timedelta(seconds=settings.JOB_HEARTBEAT_TIMEOUT_SECONDS)
    stale = JobChunk.objects.filter(
        state=JobChunk.State.RUNNING, alive_at__lt=lost, job__state=Job.State.RUNNING
    ).select_related("job")
    if jobs is not None:
        stale = stale.filter(job__in=jobs)
    released = _release(list(stale[:1000]), lost)
    for job_id, queue in released:
        logger.warning("job %s: a chunk's worker stopped answering; it runs again", job_id)
        wake(job_id, queue)
    return len(released)


@task_failure.connect
def requeue_chunk_of_lost_task(sender=None, task_id=None, exception=None, **_) -> None:
    """In the worker's main process: the child running a chunk died, so the chunk it held
    goes back to pending with a new message (another worker, or this one, redoes it)."""
    if getattr(sender, "name", None) != TASK_NAME or not isinstance(exception, WorkerLostError):
        return
    held = JobChunk.objects.filter(claim=task_id, state=JobChunk.State.RUNNING).select_related(
        "job"
    )
    for job_id, queue in _release(list(held)):
        logger.error(
            "job %s: the worker running a chunk died (%s); it runs again", job_id, exception
        )
        wake(job_id, queue)


def without_running_chunks() -> Q:
    """Jobs that have chunks, none of them running (a ``Job`` filter)."""
    chunks = JobChunk.objects.filter(job=OuterRef("pk"))
    return Q(Exists(chunks)) & ~Q(Exists(chunks.filter(state=JobChunk.State.RUNNING)))
