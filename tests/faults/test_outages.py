"""The crowd keeps its guarantees through outages of the stack's own PostgreSQL and Redis.

Client processes play annotators (entry → consent → next → label, with double submits,
lost answers, late and abandoned leases: ``tests/annotation/test_concurrency.py``) over
real HTTP through nginx and gunicorn. A third of the way through, the database is
restarted, or Redis is stopped and started again. Nothing acknowledged is lost, every
item ends with exactly N counted labels, and the app recovers without a restart; while
the database is away the answers are 503 with ``Retry-After``, while Redis is away jobs
are refused quickly with 503 and none stays pending.
"""

import json
import multiprocessing
import os
import signal
import time
import urllib.error
import urllib.parse
import urllib.request

import pytest
from django.contrib.auth.models import Group, User
from django.db import InterfaceError, OperationalError, connection
from django.db.models import F, Sum
from rest_framework.authtoken.models import Token

from annotation.models import Item
from annotation.services.batches import update_batch
from core.models import Job
from tests.annotation.test_concurrency import (
    DEADLINE_SECONDS,
    N_ITEMS,
    PER_ITEM,
    _check_guarantees,
    _make_study,
    _seed,
)
from tests.faults.crowd import patient_client_process
from tests.faults.stack import http_get

pytestmark = pytest.mark.slow

N_CLIENTS = 3
# How long an answer may take while the database is down: a request may wait for a
# pooled connection first (DATABASE_POOL_TIMEOUT, 3 s), then answers 503.
OUTAGE_ANSWER_S = 30
N_ANNOTATORS = 24
# How long a page or API answer may take while Redis hangs: its connect and answer
# timeouts (0.3 s, 0.5 s) at most twice, then the breaker keeps it out of the way.
HUNG_REDIS_ANSWER_S = 1.5


def _counted(batch) -> tuple[int, bool]:
    """(counted labels, drained?) of the batch; raises while the database is away."""
    items = Item.objects.filter(batch=batch)
    counted = items.aggregate(n=Sum("counted_count"))["n"] or 0
    return counted, not items.filter(counted_count__lt=F("target")).exists()


class Crowd:
    """What a crowd run left to check: the clients' reports and what ``fault`` saw."""

    def __init__(self, batch, reports, worker_ids, drained_at, observed, seed, fault_stack):
        self.batch, self.reports, self.worker_ids = batch, reports, worker_ids
        self.drained_at, self.observed, self.seed = drained_at, observed, seed
        self.fault_stack = fault_stack

    def check_guarantees(self) -> dict:
        """Exactly N, independence and nothing lost (test_concurrency's checks)."""
        try:
            summary = _check_guarantees(self.batch, self.reports, self.worker_ids, self.drained_at)
        except AssertionError as failure:
            raise AssertionError(
                f"{failure}\n(seed {self.seed})\n{self.fault_stack.logs()}"
            ) from failure
        stats = {}
        for report in self.reports:
            for key, value in report.get("stats", {}).items():
                if key.startswith(("answered_", "told_to_wait")):
                    stats[key] = stats.get(key, 0) + value
        print(f"\n[faults] {self.batch.slug}: {summary}; outage answers seen: {stats}")
        return summary


def _play(fault_stack, tmp_path, slug: str, fault) -> Crowd:
    """Run the crowd on a new batch; ``fault()`` once a third of the labels are in."""
    batch = _make_study(slug)
    # invitation-link workers are shown the completion code only with a platform to go to
    batch = update_batch(batch, {"completion_url": "https://example.org/done"})
    seed = _seed()  # CONCURRENCY_SEED fixes the clients' choices
    worker_ids = [f"{slug}-{index:02d}" for index in range(N_ANNOTATORS)]
    context = multiprocessing.get_context("spawn")
    drained = context.Event()
    deadline = time.time() + DEADLINE_SECONDS
    clients = []
    for index in range(N_CLIENTS):
        out_path = tmp_path / f"client-{index}.json"
        process = context.Process(
            target=patient_client_process,
            args=(fault_stack.url, batch.slug, worker_ids[index::N_CLIENTS], seed + index,
                  drained, deadline, str(out_path)),
            daemon=True,
        )  # fmt: skip
        process.start()
        clients.append((process, out_path))
    observed, drained_at = [], None
    try:
        while any(process.is_alive() for process, _ in clients):
            try:
                counted, complete = _counted(batch)
            except (OperationalError, InterfaceError):
                connection.close()  # the database is away; ask again in a moment
                time.sleep(0.2)
                continue
            if not observed and counted >= N_ITEMS * PER_ITEM // 3:
                observed.append(fault())
            if complete and drained_at is None:
                drained_at = time.time()
                drained.set()
            if time.time() > deadline + 10:
                pytest.fail(f"the crowd did not finish in time (seed {seed})\n{fault_stack.logs()}")
            time.sleep(0.1)
    finally:
        for process, _ in clients:
            process.join(timeout=10)
            if process.is_alive():
                process.terminate()
    reports = [json.loads(path.read_text()) for _, path in clients]
    assert observed, "the fault never happened: the crowd finished too early"
    return Crowd(batch, reports, worker_ids, drained_at, observed, seed, fault_stack)


def _outage(stop, start, observe):
    """A fault for ``_play``: ``stop`` a service, ``observe`` the app while it is away, let
    the crowd work on without it for two seconds more, then ``start`` it again (also when
    observing failed); the fault returns what was observed."""

    def fault():
        stop()
        try:
            observed = observe()
            time.sleep(2)
        finally:
            start()
        return observed

    return fault


def test_crowd_survives_a_database_restart(stack_db, tmp_path):
    fault_stack = stack_db
    token = {"Authorization": f"Token {_researcher_token()}"}

    def while_down():
        # while it is down the app says so: 503 with Retry-After, JSON on the API (a
        # request may first wait DATABASE_POOL_TIMEOUT for a connection)
        health = http_get(fault_stack.proxy_port, "/healthz", timeout=OUTAGE_ANSWER_S)
        entry = http_get(
            fault_stack.proxy_port, "/work/fault-pg/?worker=newcomer", timeout=OUTAGE_ANSWER_S
        )
        api = http_get(
            fault_stack.proxy_port, "/api/v1/batches/", timeout=OUTAGE_ANSWER_S, headers=token
        )
        return health, entry, api

    postgres = fault_stack.postgres
    restart_postgres = _outage(lambda: postgres.stop("fast"), postgres.start, while_down)
    crowd = _play(fault_stack, tmp_path, "fault-pg", restart_postgres)
    [(health, entry, api)] = crowd.observed
    assert health[0] == 503 and json.loads(health[2])["database"].startswith("unavailable")
    assert entry[0] == 503 and entry[1]["Retry-After"] == "5"
    assert b"Temporarily unavailable" in entry[2]
    assert api[0] == 503 and api[1]["Retry-After"] == "5"
    assert "database is not answering" in json.loads(api[2])["detail"]
    assert crowd.check_guarantees()["counted"] == N_ITEMS * PER_ITEM
    # recovered without restarting the app
    assert http_get(fault_stack.proxy_port, "/readyz")[0] == 200
    assert fault_stack.web.alive()


def _researcher_token() -> str:
    user, _ = User.objects.get_or_create(username="fault-researcher", is_staff=True)
    user.groups.add(Group.objects.get(name="researcher"))
    return Token.objects.get_or_create(user=user)[0].key


def _post(url: str, token: str, form: dict) -> tuple[int, dict, dict, float]:
    request = urllib.request.Request(
        url,
        data=urllib.parse.urlencode(form).encode(),
        headers={"Authorization": f"Token {token}", "Accept": "application/json"},
    )
    started = time.monotonic()
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            status, headers, body = response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        status, headers, body = error.code, dict(error.headers), error.read()
    return status, headers, json.loads(body), time.monotonic() - started


def test_crowd_and_jobs_survive_a_redis_outage(stack_db, tmp_path):
    fault_stack = stack_db
    token = _researcher_token()

    def while_away():
        # /healthz says what its process last saw, and asks again in the background
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline:
            health = http_get(fault_stack.proxy_port, "/healthz", timeout=1)
            if json.loads(health[2])["broker"].startswith("unavailable"):
                break
            time.sleep(0.2)
        ready = http_get(fault_stack.proxy_port, "/readyz")
        export = _post(
            f"{fault_stack.url}/api/v1/batches/fault-redis/export-jobs",
            token,
            {"layout": "long", "format": "csv"},
        )
        return health, ready, export

    stop_redis = _outage(fault_stack.redis.stop, fault_stack.redis.start, while_away)
    crowd = _play(fault_stack, tmp_path, "fault-redis", stop_redis)
    [(health, ready, export)] = crowd.observed
    assert health[0] == 200
    assert json.loads(health[2]) == {"database": "ok", "broker": "unavailable: ConnectionError"}
    assert ready[0] == 503
    status, headers, body, seconds = export
    assert status == 503 and headers["Retry-After"] == "30", (status, body)
    assert "job queue (Redis) did not answer" in body["detail"]
    assert seconds < 8, f"the refused job took {seconds:.1f} s to answer"
    assert not Job.objects.filter(state="pending").exists()
    assert Job.objects.get(kind="export", state="failed").message
    # Redis is back: the same web processes and worker queue and run a job again
    status, _, body, _ = _post(
        f"{fault_stack.url}/api/v1/batches/fault-redis/export-jobs",
        token,
        {"layout": "long", "format": "csv"},
    )
    assert status == 202, body
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        job = Job.objects.get(pk=body["id"])
        if job.state in ("succeeded", "failed"):
            break
        time.sleep(0.5)
    assert job.state == "succeeded", (job.state, job.message, fault_stack.logs())
    assert http_get(fault_stack.proxy_port, "/readyz")[0] == 200
    assert crowd.check_guarantees()["counted"] == N_ITEMS * PER_ITEM
    assert job.result["rows"] == N_ITEMS * PER_ITEM


def _timed_get(port: int, path: str, headers: dict | None = None):
    started = time.monotonic()
    status, answer_headers, body = http_get(port, path, timeout=30, headers=headers)
    return status, answer_headers, body, time.monotonic() - started


def test_crowd_and_pages_keep_going_while_redis_hangs(stack_db, tmp_path):
    """Redis frozen (SIGSTOP: it accepts connections and answers nothing) for a while
    in the middle of a crowd run, through nginx and gunicorn: pages and the API answer
    within about a second, jobs are refused quickly, nothing acknowledged is lost."""
    fault_stack = stack_db
    token = _researcher_token()

    def freeze_redis():
        os.kill(fault_stack.redis.process.pid, signal.SIGSTOP)
        frozen_at = time.monotonic()
        try:
            answers = {
                "healthz": _timed_get(fault_stack.proxy_port, "/healthz"),
                "entry": _timed_get(fault_stack.proxy_port, "/work/fault-freeze/?worker=newcomer"),
                "api": _timed_get(
                    fault_stack.proxy_port,
                    "/api/v1/batches/fault-freeze/progress",
                    headers={"Authorization": f"Token {token}"},
                ),
            }
            answers["export"] = _post(
                f"{fault_stack.url}/api/v1/batches/fault-freeze/export-jobs",
                token,
                {"layout": "long", "format": "csv"},
            )
            time.sleep(max(0.0, 8 - (time.monotonic() - frozen_at)))  # the crowd runs on
        finally:
            os.kill(fault_stack.redis.process.pid, signal.SIGCONT)
        return answers

    crowd = _play(fault_stack, tmp_path, "fault-freeze", freeze_redis)
    [answers] = crowd.observed
    times = {name: round(answer[-1], 2) for name, answer in answers.items()}
    print(f"\n[faults] answer times (s) with Redis hung: {times}")
    slow = {
        name: round(answer[-1], 2)
        for name, answer in answers.items()
        if answer[-1] > HUNG_REDIS_ANSWER_S
    }
    assert not slow, f"answers slower than {HUNG_REDIS_ANSWER_S} s with Redis hung: {slow}"
    assert answers["healthz"][0] == 200
    assert answers["entry"][0] == 200, answers["entry"][2][:500]
    assert answers["api"][0] == 200
    status, headers, body, _ = answers["export"]
    assert status == 503 and headers["Retry-After"] == "30", (status, body)
    assert not Job.objects.filter(state="pending").exists()
    summary = crowd.check_guarantees()
    assert summary["counted"] == N_ITEMS * PER_ITEM
    # Redis answers again: so does everything that needs it
    deadline = time.monotonic() + 30
    while http_get(fault_stack.proxy_port, "/readyz")[0] != 200:
        assert time.monotonic() < deadline, "not ready again after Redis came back"
        time.sleep(0.5)
