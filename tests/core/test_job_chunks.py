"""Jobs in parts (``core.jobs.chunks``) without a worker: the parts run in order in this
process and the assembly sees them all; a part is never taken twice at once; the final
chunk waits for every part; a part whose heartbeat stopped is taken again (and fails the
job after ``MAX_ATTEMPTS``); the sweep gives lost parts new messages and fails a job whose
parts nobody takes; a worker's dead child gives its part back. The same parts on real
workers: ``tests/corpora/test_parts_on_workers.py``."""

from datetime import timedelta

import pytest
from billiard.exceptions import WorkerLostError
from django.utils import timezone

from config.celery import app as celery_app
from core.jobs import chunks
from core.jobs.chunks import (
    ChunkedWork,
    Plan,
    register_chunked_job_kind,
    requeue_chunk_of_lost_task,
    requeue_lost_chunks,
    run_chunk,
    take_chunk,
)
from core.jobs.execution import run_job
from core.jobs.staleness import LOST_CHUNKS, fail_stale_jobs
from core.models import Job, JobChunk

pytestmark = pytest.mark.django_db

KIND = "test_sum_of_squares"
LOG: list = []


def _plan(job: Job) -> Plan:
    numbers = job.params["numbers"]
    return Plan(parts=[{"numbers": numbers[i : i + 2]} for i in range(0, len(numbers), 2)])


def _square(job: Job, spec: dict) -> None:
    LOG.append(("part", spec["numbers"]))


def _assemble(job: Job, final: dict, progress) -> tuple[dict, str]:
    parts = [chunk.spec["numbers"] for chunk in job.chunks.filter(final=False)]
    LOG.append(("assemble", parts))
    return {"sum": sum(n * n for part in parts for n in part)}, ""


WORK = ChunkedWork(plan=_plan, run_part=_square, assemble=_assemble)
register_chunked_job_kind(KIND, can_view=lambda user: False, work=WORK)


@pytest.fixture(autouse=True)
def clear_log():
    LOG.clear()


def running_job(numbers) -> Job:
    job = Job.objects.create(kind=KIND, params={"numbers": numbers}, state=Job.State.RUNNING)
    chunks._record_plan(job, _plan(job))
    return job


def test_in_process_the_parts_run_in_order_then_the_assembly():
    job = Job.objects.create(kind=KIND, params={"numbers": [1, 2, 3, 4, 5]})
    job = run_job(str(job.pk))
    assert job.state == Job.State.SUCCEEDED, job.message
    assert job.result == {"sum": 1 + 4 + 9 + 16 + 25}
    assert LOG == [
        ("part", [1, 2]),
        ("part", [3, 4]),
        ("part", [5]),
        ("assemble", [[1, 2], [3, 4], [5]]),
    ]
    assert (job.progress, job.total) == (3, 3)
    assert list(job.chunks.values_list("state", "final")) == [("done", False)] * 3 + [
        ("done", True)
    ]
    # taken without a heartbeat: a part run in the web process is never thought lost
    assert not job.chunks.filter(alive_at__isnull=False).exists()


def test_two_tasks_never_take_one_part_and_the_final_waits_for_every_part():
    job = running_job([1, 2, 3, 4])
    first, second = take_chunk(job.pk, "task-1"), take_chunk(job.pk, "task-2")
    assert (first.index, second.index) == (0, 1)
    assert take_chunk(job.pk, "task-3") is None  # parts running, the final must wait
    JobChunk.objects.filter(pk=first.pk).update(state="done")
    assert take_chunk(job.pk, "task-3", parts=False) is None
    JobChunk.objects.filter(pk=second.pk).update(state="done")
    final = take_chunk(job.pk, "task-3", parts=False)
    assert final.final and final.claim == "task-3" and final.attempts == 1


def test_a_part_whose_heartbeat_stopped_is_taken_again_and_fails_the_job_after_three_tries(
    settings,
):
    settings.JOB_HEARTBEAT_TIMEOUT_SECONDS = 60
    job = running_job([1, 2])
    for attempt in range(1, chunks.MAX_ATTEMPTS + 1):
        part = take_chunk(job.pk, f"task-{attempt}")
        assert (part.index, part.attempts) == (0, attempt)
        silent = timezone.now() - timedelta(seconds=61)
        JobChunk.objects.filter(pk=part.pk).update(alive_at=silent)
    assert take_chunk(job.pk, "task-4") is None
    job.refresh_from_db()
    assert job.state == Job.State.FAILED
    assert "part 0 of this job was started 3 times" in job.message


def test_the_sweep_gives_a_silent_part_a_new_message(settings, monkeypatch):
    settings.JOB_HEARTBEAT_TIMEOUT_SECONDS = 60
    woken = []
    monkeypatch.setattr(chunks, "wake", lambda job_id, queue, count=1: woken.append(job_id))
    monkeypatch.setitem(celery_app.conf, "task_always_eager", False)
    job = running_job([1, 2, 3])
    silent, alive = take_chunk(job.pk, "gone"), take_chunk(job.pk, "busy")
    JobChunk.objects.filter(pk=silent.pk).update(alive_at=timezone.now() - timedelta(seconds=61))
    assert requeue_lost_chunks() == 1
    silent.refresh_from_db()
    alive.refresh_from_db()
    assert (silent.state, silent.claim, alive.state) == ("pending", "", "running")
    assert woken == [job.pk]


def test_without_a_broker_nothing_is_requeued(monkeypatch):
    job = running_job([1, 2])
    part = take_chunk(job.pk, "here")
    JobChunk.objects.filter(pk=part.pk).update(alive_at=timezone.now() - timedelta(days=1))
    assert requeue_lost_chunks() == 0


def test_a_dead_child_gives_its_part_back(monkeypatch):
    woken = []
    monkeypatch.setattr(chunks, "wake", lambda job_id, queue, count=1: woken.append(job_id))
    job = running_job([1, 2, 3])
    part = take_chunk(job.pk, "the-task-id")
    requeue_chunk_of_lost_task(sender=run_chunk, task_id="other", exception=WorkerLostError())
    assert JobChunk.objects.get(pk=part.pk).state == "running" and woken == []
    requeue_chunk_of_lost_task(sender=run_chunk, task_id="the-task-id", exception=ValueError())
    assert JobChunk.objects.get(pk=part.pk).state == "running"
    requeue_chunk_of_lost_task(
        sender=run_chunk, task_id="the-task-id", exception=WorkerLostError("signal 9")
    )
    part.refresh_from_db()
    assert (part.state, part.claim, part.attempts) == ("pending", "", 1)
    assert woken == [job.pk]
    assert take_chunk(job.pk, "next").pk == part.pk  # taken again, a second attempt


def test_a_job_whose_parts_nobody_takes_fails_like_a_pending_one(settings):
    settings.JOB_PENDING_TIMEOUT_SECONDS = 900
    waiting, working = running_job([1, 2]), running_job([3, 4])
    take_chunk(working.pk, "busy")
    long_ago = timezone.now() - timedelta(seconds=901)
    Job.objects.filter(pk__in=[waiting.pk, working.pk]).update(last_progress_at=long_ago)
    assert fail_stale_jobs() == 1
    waiting.refresh_from_db()
    working.refresh_from_db()
    assert waiting.state == "failed" and waiting.message == LOST_CHUNKS.format(seconds=900)
    assert working.state == "running"  # a part is running: it is not stale


def test_a_part_that_raises_fails_the_job_and_stops_the_others(monkeypatch):
    job = running_job([1, 2, 3, 4])

    def broken(job, spec):
        raise ValueError("no such number")

    monkeypatch.setattr(WORK, "run_part", broken)
    assert run_chunk.apply(args=(str(job.pk),)).get() == "failed"
    job.refresh_from_db()
    assert job.state == "failed" and job.message == "ValueError: no such number"
    assert take_chunk(job.pk, "later") is None


def _run_as_worker(job: Job, task_id: str) -> str:
    """``run_chunk`` as a worker runs a message (not eagerly, not called directly)."""
    run_chunk.push_request(id=task_id, is_eager=False, called_directly=False)
    try:
        return run_chunk.run(str(job.pk))
    finally:
        run_chunk.pop_request()


def test_a_job_in_parts_keeps_only_a_few_messages_queued(
    settings, monkeypatch, django_capture_on_commit_callbacks
):
    """A corpus of a thousand parts queued all at once would make every job queued after
    it wait for all of them (and fail as never started); it queues JOB_CHUNK_MESSAGES,
    and each part that finishes queues its successor while parts wait untaken."""
    settings.JOB_CHUNK_MESSAGES = 2
    woken = []
    monkeypatch.setattr(chunks, "wake", lambda job_id, queue, count=1: woken.append(count))
    job = Job.objects.create(kind=KIND, params={"numbers": list(range(1, 11))})
    job.state = Job.State.RUNNING
    job.save()
    with django_capture_on_commit_callbacks(execute=True):
        WORK.dispatch(job)
    assert woken == [2]  # five parts, two messages
    outcomes = [_run_as_worker(job, f"task-{n}") for n in range(5)]
    # each of the first four parts left parts untaken behind it; the fifth was the last,
    # and its message went on to the assembly
    assert woken == [2, 1, 1, 1, 1]
    assert outcomes == ["part done"] * 4 + ["assembled"]
    job.refresh_from_db()
    assert job.state == Job.State.SUCCEEDED and job.result == {"sum": 385}


def test_a_broker_that_does_not_take_the_next_message_fails_no_part(settings, monkeypatch):
    settings.JOB_CHUNK_MESSAGES = 1
    job = running_job([1, 2, 3, 4])

    def broker_down(job_id, queue, count=1):
        raise ConnectionError("the broker does not answer")

    monkeypatch.setattr(chunks, "wake", broker_down)
    assert _run_as_worker(job, "task-0") == "part done"
    job.refresh_from_db()
    assert job.state == Job.State.RUNNING and job.progress == 1
