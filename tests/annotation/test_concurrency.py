"""Exactly N per item, independence and nothing lost, under real concurrency (SPEC guarantees).

Three tests, each against committed data (``transaction=True``) so other processes and
threads see it:

* PostgreSQL: a real gunicorn server (4 worker processes) on the pytest test database,
  hammered by client processes (``multiprocessing`` spawn) that play 40 crowdworkers through
  the HTTP API — entry page, consent form, ``next`` and ``label`` with the CSRF header — with
  random behaviour per lease: normal submits, abandoned leases (some annotators come back
  only once the batch drained), late submits past the lease time, slow readers who keep
  their lease past the lease time with heartbeats (their label must be counted), double
  submits, retries after a lost response, ``next`` called twice, and one gunicorn worker
  killed mid-run (a server restart). Annotators who arrive when every slot is taken are
  turned away at the entry page, before consent, and must hold nothing.
* SQLite: the same scenario against pytest-django's threaded ``live_server`` (one process),
  played by client threads.
* Two tabs of one annotator racing ``next`` end with one open lease, on either backend.

Both scenarios run for every built-in kind (``STUDY_SIZES``): the client sends a valid label
of the batch's kind (a word for ``short_text``, an integer of the scale otherwise).

The client code below uses only the standard library (no Django), so spawned client
processes import this module without setting Django up. Django models are imported inside
the test-side functions.

Run: ``pytest tests/annotation/test_concurrency.py -s`` (SQLite), or with
``DATABASE_URL=postgres://...`` for PostgreSQL; ``CONCURRENCY_SEED=<seed>`` fixes the clients'
random choices (printed with the result; the interleaving still varies).
The measured labels/second is printed and written to ``test-artifacts/concurrency.txt``.
"""

import http.client
import json
import logging
import multiprocessing
import os
import random
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
import urllib.parse
from collections import Counter
from datetime import UTC, datetime
from http.cookies import SimpleCookie
from pathlib import Path

import pytest
from django.db import connection, connections, transaction

# slow, yet also run in CI's SQLite pass: the threaded server on SQLite is a scenario of its own
pytestmark = [pytest.mark.slow, pytest.mark.both_databases]

BASE_DIR = Path(__file__).resolve().parents[2]
# Figures go with the test run (untracked), not into the repository.
RESULTS_FILE = BASE_DIR / "test-artifacts" / "concurrency.txt"

N_ITEMS = 30
PER_ITEM = 5
# Every kind runs both scenarios; the kinds after the first with fewer items, so the default
# (SQLite) run stays quick: the guarantees are the platform's, the kind only changes what a
# label is.
STUDY_SIZES = {  # study (a kind, or a design of one) -> (items, N)
    "absolute": (N_ITEMS, PER_ITEM),
    "pairwise": (10, 4),
    "short_text": (10, 4),
    "similarity": (10, 4),
    # bundles of 5 (bundle_by=query, balanced order): 6 queries x 5 responses, N = 5
    "bundled": (30, 5),
}
# the kind of each study that is a design rather than a kind
STUDY_KINDS = {"bundled": "absolute"}
BUNDLE_SIZE = 5
LEASE_SECONDS = 2
DEADLINE_SECONDS = 85  # per scenario, from the clients' start (typically 10–30 s)
REQUEST_TIMEOUT = 20
ALL_DONE_REASONS = {"drained", "nothing_left_for_you"}
# while the study goes on: the remaining slots are leased by others (ask again shortly)
WAIT_REASONS = {"wait", "busy"}
COMPLETION_URL = "https://example.org/done"
# The entry page's titles for a newcomer when nothing is left (annotation.views.worker):
# the batch is complete, or no held slot came back while they waited
FULL_NOTICES = ("This study is full", "No place came back in time")
# The waiting page (every slot they could take is held by a live lease): ask again
WAITING_PAGE = 'id="waiting"'
# Annotators arrive in waves: the later waves come after the first wave's abandoned
# leases expired, when nothing may have asked for work in between
WAVES = 3
WAVE_GAP_SECONDS = 1.5 * LEASE_SECONDS

# What an annotator does with a lease (relative weights).
BEHAVIOURS = [
    ("normal", 50),
    ("double_submit", 12),  # the same value twice (a double click); sometimes a changed value
    ("lost_response", 12),  # the response is lost (connection closed), the client retries
    ("abandon", 9),  # never submits; comes back after the lease expired
    ("leave", 4),  # abandons and only comes back after the batch drained
    ("late", 13),  # submits after the lease time (counted or surplus)
    ("slow_reader", 8),  # reads past the lease time, keeping it alive with heartbeats
]
DOUBLE_NEXT_PROBABILITY = 0.15
# A slow reader submits this long after the lease began: past the lease time, within the
# batch's max_lease_seconds (3 x the lease time by default), heart-beating as the page does.
SLOW_READ_SECONDS = 1.75 * LEASE_SECONDS

# What a worker of each kind sends: a word for short_text, an integer of the scale otherwise.
ANSWER_WORDS = ["blue", "red", "green", "amber", "teal"]
SCALES = {"absolute": [1, 2, 3, 4, 5], "pairwise": [2, 1, 0, -1, -2], "similarity": [1, 2, 3, 4]}


def label_value(kind: str, rng: random.Random) -> int | str:
    """A valid label of ``kind``."""
    return rng.choice(ANSWER_WORDS if kind == "short_text" else SCALES[kind])


def changed_value(kind: str, value: int | str) -> int | str:
    """Another valid label of ``kind`` than ``value`` (a changed mind: answered with 409)."""
    choices = ANSWER_WORDS if kind == "short_text" else SCALES[kind]
    return choices[(choices.index(value) + 1) % len(choices)]


def _seed() -> int:
    return int(os.environ.get("CONCURRENCY_SEED") or random.SystemRandom().randrange(10**9))


# --------------------------------------------------------------------------------------
# Client side: standard library only.
# --------------------------------------------------------------------------------------


class ProtocolError(AssertionError):
    """The server answered something the API does not allow."""


class WorkerBrowser:
    """One crowdworker's browser: its cookies (session, csrftoken) and the CSRF header."""

    RETRIES = 8

    def __init__(self, base_url: str, stats: Counter):
        parts = urllib.parse.urlsplit(base_url)
        self.host, self.port = parts.hostname, parts.port
        self.cookies: dict[str, str] = {}
        self.stats = stats
        self.resent = False

    def _send(self, method: str, path: str, body: bytes | None, content_type: str | None):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=REQUEST_TIMEOUT)
        connecting = time.monotonic()
        conn.connect()
        connect_ms = int((time.monotonic() - connecting) * 1000)
        self.stats["slowest_connect_ms"] = max(self.stats["slowest_connect_ms"], connect_ms)
        headers = {}
        if self.cookies:
            headers["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        if method == "POST" and "csrftoken" in self.cookies:
            headers["X-CSRFToken"] = self.cookies["csrftoken"]
        if content_type:
            headers["Content-Type"] = content_type
        conn.request(method, path, body=body, headers=headers)
        return conn

    def request(self, method: str, path: str, *, json_body=None, form=None):
        """(status, parsed JSON or text); retried on connection errors (all calls are
        idempotent: a lost ``next`` returns the same lease, a lost label is acknowledged
        by its retry)."""
        body, content_type = None, None
        if json_body is not None:
            body, content_type = json.dumps(json_body).encode(), "application/json"
        elif form is not None:
            body = urllib.parse.urlencode(form).encode()
            content_type = "application/x-www-form-urlencoded"
        for attempt in range(self.RETRIES):
            self.stats["requests"] += 1
            conn = None
            sent = time.monotonic()
            try:
                conn = self._send(method, path, body, content_type)
                response = conn.getresponse()
                data = response.read()
                elapsed_ms = int((time.monotonic() - sent) * 1000)
                self.stats["request_ms_total"] += elapsed_ms
                slowest = f"slowest_{path.rstrip('/').split('/')[-1].split('?')[0]}_ms"
                if path.startswith("/api/v1/assignments/"):
                    slowest = "slowest_label_ms"
                elif path.startswith("/work/") and method == "GET":
                    slowest = "slowest_entry_ms"
                self.stats[slowest] = max(self.stats[slowest], elapsed_ms)
            except (OSError, http.client.HTTPException) as error:
                self.stats["connection_retries"] += 1
                if attempt == self.RETRIES - 1:
                    raise ProtocolError(
                        f"{method} {path}: no answer after retries: {error!r}"
                    ) from error
                time.sleep(0.1 * (attempt + 1))
                continue
            finally:
                if conn is not None:
                    conn.close()
            for header in response.headers.get_all("Set-Cookie") or []:
                cookie = SimpleCookie()
                cookie.load(header)
                for name, morsel in cookie.items():
                    self.cookies[name] = morsel.value
            # A request resent after a connection error may have been stored the first time.
            self.resent = attempt > 0
            if response.headers.get_content_type() == "application/json":
                return response.status, json.loads(data)
            return response.status, data.decode("utf-8", "replace")
        raise AssertionError("unreachable")

    def post_and_hang_up(self, path: str, json_body) -> None:
        """Send a request and close the connection without reading the answer."""
        self.stats["requests"] += 1
        self.stats["lost_responses"] += 1
        try:
            conn = self._send("POST", path, json.dumps(json_body).encode(), "application/json")
            conn.close()
        except OSError:
            pass


class Person:
    """One annotator as played by a client: what they hold, saw and got acknowledged."""

    def __init__(self, worker_id: str, browser: WorkerBrowser, arrive_at: float = 0.0):
        self.worker_id = worker_id
        self.browser = browser
        self.entered = False  # through the entry page and the consent form
        self.ready_at = arrive_at
        self.pending_late: tuple[str, str, int | str] | None = None  # (assignment, item, value)
        self.reading: dict | None = None  # a slow reader's lease, kept alive by heartbeats
        self.gone = False
        self.finished = False
        self.leases: dict[str, str] = {}  # assignment id -> item id, as handed out by next
        self.acked: set[str] = set()  # assignments with an acknowledged label


def run_annotators(
    base_url: str,
    slug: str,
    worker_ids: list[str],
    seed: int,
    drained,
    deadline: float,
    kind: str = "absolute",
) -> dict:
    """Play these annotators against the server until the batch drained and each of them
    was told there is nothing left. ``drained`` is an Event set by the test once every item
    holds N counted labels; ``deadline`` is a ``time.time()`` value.

    ``kind`` is the batch's kind: what a label's ``value`` is (``label_value``).

    Returns ``records`` (every acknowledged label: worker, assignment, item, value, status,
    HTTP code, behaviour), ``errors`` (protocol violations seen), ``finals`` and ``stats``.
    """
    rng = random.Random(seed)
    stats: Counter = Counter()
    records: list[dict] = []
    errors: list[str] = []
    finals: dict[str, dict] = {}
    names, weights = zip(*BEHAVIOURS, strict=True)

    def label(person: Person, assignment: str, value: int | str):
        return person.browser.request(
            "POST",
            f"/api/v1/assignments/{assignment}/label",
            json_body={"value": value, "duration_ms": rng.randrange(300, 9000)},
        )

    def acknowledge(person, assignment, item_id, value, code, body, behaviour, expect_codes):
        if person.browser.resent:  # the lost first attempt may have stored the label
            expect_codes = set(expect_codes) | {200}
        if code not in expect_codes or not isinstance(body, dict):
            raise ProtocolError(
                f"{behaviour} label of {assignment}: HTTP {code} {body!r}, "
                f"expected {sorted(expect_codes)}"
            )
        if body.get("status") not in ("counted", "surplus"):
            raise ProtocolError(f"{behaviour} label of {assignment}: bad status {body!r}")
        person.acked.add(assignment)
        records.append(
            {
                "worker": person.worker_id,
                "assignment": assignment,
                "item_id": item_id,
                "value": value,
                "status": body["status"],
                "code": code,
                "behaviour": behaviour,
            }
        )
        stats[f"status_{body['status']}"] += 1
        return body["status"]

    def next_item(person: Person) -> dict:
        code, body = person.browser.request("POST", f"/api/v1/work/{slug}/next", json_body={})
        if code != 200 or not isinstance(body, dict) or "assignment" not in body:
            raise ProtocolError(f"next: HTTP {code} {body!r}")
        if body["assignment"] is None:
            reason = body.get("reason")
            if reason in WAIT_REASONS:
                # the ending shown if nothing comes back in time: a code only for work done
                earned = bool(person.acked)
                if bool(body.get("completion_code")) != earned or not body.get("retry_after"):
                    raise ProtocolError(f"told to wait, but: {body!r}")
                return body
            # a completion code for work done, never for nothing done
            earned = bool(person.acked)
            if reason not in ALL_DONE_REASONS or bool(body.get("completion_code")) != earned:
                raise ProtocolError(f"next without work ({len(person.acked)} done): {body!r}")
            return body
        item_id = body["item"]["item_id"]
        assignment = body["assignment"]
        if assignment not in person.leases and item_id in person.leases.values():
            raise ProtocolError(f"item {item_id} handed out twice to {person.worker_id}")
        person.leases[assignment] = item_id
        if body["progress"]["done"] != len(person.acked):
            raise ProtocolError(
                f"progress.done {body['progress']['done']} but {len(person.acked)} labels "
                f"were acknowledged to {person.worker_id}"
            )
        return body

    def until(wall_time: float) -> float:
        return max(0.0, wall_time - time.time())

    def read_on(person: Person) -> None:
        """A slow reader's next move: a heartbeat, or the label once read. Whatever the
        server did in time by this client's clock (same machine) is checked: a heartbeat
        answered before the lease's expiry extends it, and a label answered before the
        (extended) expiry is counted, never surplus."""
        reading = person.reading
        assignment, item_id = reading["assignment"], reading["item_id"]
        if time.time() >= reading["submit_at"]:
            person.reading = None
            code, answer = label(person, assignment, reading["value"])
            in_time = time.time() < reading["expires_at"]
            status = acknowledge(
                person, assignment, item_id, reading["value"], code, answer, "slow_reader", {201}
            )
            if in_time and status != "counted":
                raise ProtocolError(
                    f"slow reader's label of {assignment}, within its extended lease: {status}"
                )
            stats["slow_reader_in_time" if in_time else "slow_reader_lapsed"] += 1
            return
        code, answer = person.browser.request(
            "POST", f"/api/v1/assignments/{assignment}/heartbeat", json_body={}
        )
        in_time = time.time() < reading["expires_at"]
        if code == 200 and isinstance(answer, dict) and answer.get("expires_at"):
            extended = datetime.fromisoformat(answer["expires_at"]).timestamp()
            if extended < reading["expires_at"] - 0.001:
                raise ProtocolError(f"heartbeat of {assignment} shortened its lease: {answer!r}")
            reading["expires_at"] = extended
            stats["heartbeats"] += 1
        elif code == 409 and not in_time:
            stats["heartbeat_after_expiry"] += 1  # this client was late: nothing revived
        else:
            raise ProtocolError(f"heartbeat of {assignment} in time: HTTP {code} {answer!r}")
        wait = min(reading["beat_every"], until(reading["submit_at"]))
        person.ready_at = time.monotonic() + wait

    def step(person: Person, is_drained: bool) -> None:
        now = time.monotonic()
        if person.reading is not None:
            read_on(person)
            return
        if person.pending_late is not None:
            assignment, item_id, value = person.pending_late
            person.pending_late = None
            code, body = label(person, assignment, value)
            acknowledge(person, assignment, item_id, value, code, body, "late", {201})
            return
        if is_drained:
            body = next_item(person)
            if body["assignment"] is not None:
                raise ProtocolError(f"drained batch handed out {body['assignment']}")
            if body["reason"] not in ALL_DONE_REASONS:
                raise ProtocolError(f"drained batch, but told: {body!r}")
            finals[person.worker_id] = body
            person.finished = True
            return
        body = next_item(person)
        if body["assignment"] is None:
            stats[f"next_{body['reason']}"] += 1
            person.ready_at = now + rng.uniform(0.3, 0.7)  # leases may expire: ask again
            return
        stats["leases"] += 1
        assignment, item_id = body["assignment"], body["item"]["item_id"]
        expires_at = datetime.fromisoformat(body["expires_at"]).timestamp()
        if rng.random() < DOUBLE_NEXT_PROBABILITY:
            stats["double_next"] += 1
            again = next_item(person)
            answered_at = time.time()
            if (again["assignment"], again.get("expires_at")) != (assignment, body["expires_at"]):
                # Only allowed once the first lease expired (a slow machine can take that long).
                if answered_at < expires_at:
                    raise ProtocolError(
                        f"second next gave {again['assignment']} (expires "
                        f"{again.get('expires_at')}), the first {assignment} (expires "
                        f"{body['expires_at']}) was still open"
                    )
                stats["double_next_after_expiry"] += 1
                if again["assignment"] is None:
                    person.ready_at = now + rng.uniform(0.3, 0.7)
                    return
                assignment, item_id = again["assignment"], again["item"]["item_id"]
                expires_at = datetime.fromisoformat(again["expires_at"]).timestamp()
        value = label_value(kind, rng)
        behaviour = rng.choices(names, weights)[0]
        stats[behaviour] += 1
        if behaviour == "normal":
            code, answer = label(person, assignment, value)
            acknowledge(person, assignment, item_id, value, code, answer, behaviour, {201})
        elif behaviour == "double_submit":
            code, answer = label(person, assignment, value)
            first = acknowledge(person, assignment, item_id, value, code, answer, behaviour, {201})
            code, answer = label(person, assignment, value)
            second = acknowledge(person, assignment, item_id, value, code, answer, behaviour, {200})
            if first != second:
                raise ProtocolError(f"retry of {assignment} changed status {first}->{second}")
            if rng.random() < 0.5:
                code, answer = label(person, assignment, changed_value(kind, value))
                if code != 409:
                    raise ProtocolError(f"changed value for {assignment}: HTTP {code} {answer!r}")
        elif behaviour == "lost_response":
            path = f"/api/v1/assignments/{assignment}/label"
            person.browser.post_and_hang_up(path, {"value": value, "duration_ms": 1000})
            if rng.random() < 0.5:
                time.sleep(rng.uniform(0, 0.05))
            code, answer = label(person, assignment, value)
            # 201 if the retry overtook the lost request, 200 if that one was stored first
            acknowledge(person, assignment, item_id, value, code, answer, behaviour, {200, 201})
        elif behaviour in ("abandon", "leave"):
            person.ready_at = time.monotonic() + until(expires_at) + rng.uniform(0.3, 0.8)
            person.gone = behaviour == "leave"
        elif behaviour == "late":
            person.pending_late = (assignment, item_id, value)
            person.ready_at = time.monotonic() + until(expires_at) + rng.uniform(0.3, 1.0)
        elif behaviour == "slow_reader":
            leased_at = expires_at - LEASE_SECONDS
            # beats well within the lease (the page beats at a third of it), so that a busy
            # client's delay does not let it lapse
            beat_every = min(body["heartbeat_seconds"], LEASE_SECONDS / 4)
            person.reading = {
                "assignment": assignment,
                "item_id": item_id,
                "value": value,
                "expires_at": expires_at,
                "submit_at": leased_at + SLOW_READ_SECONDS,
                "beat_every": beat_every,
            }
            person.ready_at = time.monotonic() + beat_every

    refused: list[list] = []  # [worker id, time.time() when told "full"]

    def enter(person: Person) -> None:
        """The study link: the consent form (then consent), the waiting page (ask again
        shortly, as the page itself does), or "full" (turned away before consent)."""
        code, page = person.browser.request("GET", f"/work/{slug}/?worker={person.worker_id}")
        if code == 200 and isinstance(page, str) and WAITING_PAGE in page:
            stats["entry_waits"] += 1
            person.ready_at = time.monotonic() + rng.uniform(0.3, 0.7)
            return
        if code == 409 and person.browser.resent and "csrftoken" in person.browser.cookies:
            # The first answer to this entry was lost (a connection cut, an outage) after
            # the server had bound the participation to the session that answer carried;
            # the page says "open in another browser" and the person continues here.
            code, page = _continue_here(person)
        if code != 200 or "csrftoken" not in person.browser.cookies:
            raise ProtocolError(f"entry: HTTP {code}")
        if any(notice in page for notice in FULL_NOTICES):
            # SPEC, "Admission and leaving"; checked in _check_guarantees
            refused.append([person.worker_id, time.time()])
            person.finished = True
            return
        token = person.browser.cookies["csrftoken"]
        code, _ = person.browser.request(
            "POST", f"/work/{slug}/consent", form={"csrfmiddlewaretoken": token}
        )
        if code != 302:
            raise ProtocolError(f"consent: HTTP {code}")
        person.entered = True

    def _continue_here(person: Person) -> tuple[int, object]:
        stats["entry_continued_here"] += 1
        token = person.browser.cookies["csrftoken"]
        code, _ = person.browser.request(
            "POST", f"/work/{slug}/switch", form={"csrfmiddlewaretoken": token}
        )
        if code != 302:
            raise ProtocolError(f"continue here: HTTP {code}")
        return person.browser.request("GET", f"/work/{slug}/?worker={person.worker_id}")

    begin = time.monotonic()
    people = [
        Person(
            worker_id,
            WorkerBrowser(base_url, stats),
            arrive_at=begin + (index * WAVES // len(worker_ids)) * WAVE_GAP_SECONDS,
        )
        for index, worker_id in enumerate(worker_ids)
    ]
    started = time.time()

    while True:
        if time.time() > deadline:
            errors.append(
                f"client gave up at the deadline; unfinished: "
                f"{[p.worker_id for p in people if not p.finished]}"
            )
            break
        active = [p for p in people if not p.finished]
        if not active:
            break
        is_drained = drained.is_set()
        now = time.monotonic()
        ready = [
            p
            for p in active
            if p.ready_at <= now or (is_drained and p.gone and p.pending_late is None)
        ]
        ready = [p for p in ready if not p.gone or is_drained]
        if not ready:
            time.sleep(0.01)
            continue
        person = rng.choice(ready)
        try:
            if person.entered:
                step(person, is_drained)
            else:
                enter(person)
        except ProtocolError as error:
            errors.append(f"{person.worker_id}: {error}")
            person.finished = True
    return {
        "records": records,
        "errors": errors,
        "finals": finals,
        "refused": refused,
        "stats": dict(stats),
        "started": started,
        "ended": time.time(),
    }


def client_process(base_url, slug, worker_ids, seed, drained, deadline, out_path, kind) -> None:
    """Entry point of a spawned client process: play, then write the report as JSON."""
    try:
        report = run_annotators(base_url, slug, worker_ids, seed, drained, deadline, kind)
    except BaseException:
        report = {"errors": [traceback.format_exc()], "records": [], "finals": {}}
    Path(out_path).write_text(json.dumps(report))


# --------------------------------------------------------------------------------------
# Test side.
# --------------------------------------------------------------------------------------


def _study_of(batch) -> str:
    return "bundled" if batch.bundle_by != "none" else batch.kind


def _make_study(slug: str, kind: str = "absolute"):
    """A live batch of ``kind`` (``STUDY_SIZES``); the kinds whose items are texts in
    ``Item.content`` are imported from an items file, and so is the bundled study."""
    from tests.annotation.bundled import bundled_batch
    from tests.annotation.kinds.studies import make_study
    from tests.factories import make_batch

    n_items, per_item = STUDY_SIZES[kind]
    if kind == "bundled":
        return bundled_batch(
            slug,
            n_queries=n_items // BUNDLE_SIZE,
            per_query=BUNDLE_SIZE,
            per_item=per_item,
            bundle_order="balanced",
            lease_seconds=LEASE_SECONDS,
            completion_url=COMPLETION_URL,
        )
    if kind in ("absolute", "pairwise"):
        return make_batch(
            kind=kind,
            n_items=n_items,
            per_item=per_item,
            lease_seconds=LEASE_SECONDS,
            slug=slug,
            completion_url=COMPLETION_URL,
        )
    return make_study(
        kind,
        slug=slug,
        n_items=n_items,
        per_item=per_item,
        lease_seconds=LEASE_SECONDS,
        completion_url=COMPLETION_URL,
    )


def _as_sent(value: int | str) -> str:
    """A value as ``TaskKind.shown`` gives a stored label: what the worker sent."""
    return repr(value) if isinstance(value, str) else str(value)


def _state_summary(batch) -> str:
    from annotation.models import Assignment, Item

    items = list(
        Item.objects.filter(batch=batch)
        .order_by("position")
        .values_list("item_id", "reserved_count", "counted_count")
    )
    short = [f"{i}:{r}/{c}" for i, r, c in items if c < batch.annotations_per_item]
    open_leases = Assignment.objects.filter(batch=batch, state="open").count()
    return f"items below N (reserved/counted): {short}; open leases: {open_leases}"


def _supervise(batch, drained, clients_running, deadline, on_progress=None) -> float:
    """Watch the database; set ``drained`` once every item holds N counted labels.

    Returns the time.time() at which the batch drained (None if the clients stopped
    before). Fails with the state of the batch if clients still run after the deadline."""
    from django.db.models import F, Sum

    from annotation.models import Item

    drained_at = None
    while clients_running():
        if drained_at is None:
            if not Item.objects.filter(batch=batch, counted_count__lt=F("target")).exists():
                drained_at = time.time()
                drained.set()
            elif on_progress is not None:
                counted = Item.objects.filter(batch=batch).aggregate(n=Sum("counted_count"))["n"]
                on_progress(counted)
        if time.time() > deadline + 5:
            pytest.fail(
                f"the batch did not drain within {DEADLINE_SECONDS} s; " + _state_summary(batch)
            )
        time.sleep(0.05)
    return drained_at


# the scenario: at least this share of the people who took a bundle left one of
# them halfway (the behaviours above make it about three in four)
MIN_MID_BUNDLE_LEAVERS = 0.3


def _check_bundles(batch) -> dict:
    """A bundle's leases are taken together (one lease time per person and bundle), a
    person holds one bundle at a time (an earlier bundle's leases had all ended before
    the next one's began), and nobody meets a query twice. The scenario did what it is
    for: at least ``MIN_MID_BUNDLE_LEAVERS`` of the people left a bundle halfway (some of
    its items answered, others never), and what they left was given out again as part of
    a set (a take of fewer items than the bundle) — and completed, since every item has
    its N (checked by the caller)."""
    from collections import defaultdict

    from django.db.models import Count, Q

    from annotation.models import Assignment, Item

    spans = defaultdict(list)
    for annotator, bundle, query, leased, ended in (
        Assignment.objects.filter(batch=batch, purpose="regular")
        .values_list("annotator_id", "item__bundle", "item__query_id", "leased_at", "submitted_at")
        .order_by("leased_at")
    ):
        spans[(annotator, bundle)].append((leased, ended, query))
    by_person = defaultdict(list)
    for (annotator, bundle), leases in spans.items():
        assert len({leased for leased, _, _ in leases}) == 1, (annotator, bundle, leases)
        assert len({query for _, _, query in leases}) == 1, (annotator, bundle)
        by_person[annotator].append((leases[0][0], bundle))
    for annotator, bundles in by_person.items():
        queries = [bundle for _, bundle in bundles]
        assert len(queries) == len(set(queries)), f"{annotator} met a query twice"
        ordered = sorted(bundles)
        for (_, earlier), (later_start, _) in zip(ordered, ordered[1:], strict=False):
            open_after = Assignment.objects.filter(
                batch=batch, annotator_id=annotator, item__bundle=earlier
            ).filter(
                # neither answered nor expired when the next bundle was leased
                (Q(submitted_at__isnull=True) | Q(submitted_at__gt=later_start))
                & Q(expires_at__gt=later_start)
            )
            held = list(open_after.values_list("state", "leased_at", "expires_at", "submitted_at"))
            assert not held, f"{annotator} held two bundles at once: {held} at {later_start}"
    left_halfway = {
        annotator
        for (annotator, _), leases in spans.items()
        if any(ended is None for _, ended, _ in leases)
        and any(ended is not None for _, ended, _ in leases)
    }
    size = dict(
        Item.objects.filter(batch=batch, is_check=False)
        .values("bundle")
        .annotate(n=Count("pk"))
        .values_list("bundle", "n")
    )
    partial = sum(len(leases) < size[bundle] for (_, bundle), leases in spans.items())
    share = len(left_halfway) / len(by_person)
    assert share >= MIN_MID_BUNDLE_LEAVERS, (
        f"only {len(left_halfway)} of {len(by_person)} people left a bundle halfway"
    )
    assert partial > 0, "nobody was given part of a set after a leaver"
    return {
        "people_with_a_bundle": len(by_person),
        "left_a_bundle_halfway": len(left_halfway),
        "partial_sets_given": partial,
    }


def _check_guarantees(batch, reports: list[dict], worker_ids: list[str], drained_at) -> dict:
    """The exactly-N, independence and nothing-lost guarantees, from the database and from
    what the clients were told."""
    from django.db.models import Count

    from annotation.models import Assignment, Item, Label

    errors = [error for report in reports for error in report["errors"]]
    assert not errors, "clients saw protocol violations:\n" + "\n".join(errors[:20])
    assert drained_at is not None, "clients stopped before the batch drained; " + (
        _state_summary(batch)
    )
    finals = {w: body for report in reports for w, body in report["finals"].items()}
    refused = {w for report in reports for w, _ in report.get("refused", [])}
    assert sorted(finals) == sorted(set(worker_ids) - refused), (
        "not every annotator who got in was told the batch is done"
    )
    # Nobody is told "full" while work remains: a newcomer could take any slot that was
    # free or expired, so "full" comes only once every item was complete (the waiting
    # page covers the slots merely held by others' leases).
    early = [
        (w, round(drained_at - at, 2))
        for report in reports
        for w, at in report.get("refused", [])
        if at < drained_at - 0.5
    ]
    assert not early, f"told 'full' before the batch was complete (seconds early): {early}"
    # Turned away at the door: never asked to consent, nothing leased, nothing labelled.
    assert not Assignment.objects.filter(batch=batch, annotator__platform_id__in=refused).exists()
    # (how many were turned away depends on the waves: a late wave may find it complete)
    acked_by_worker = Counter(
        record["worker"] for report in reports for record in report["records"]
    )
    for worker, body in finals.items():
        code = batch.completion_code if acked_by_worker[worker] else None
        assert body["assignment"] is None and body["completion_code"] == code, (worker, body)

    # Exactly N counted labels per item, by the counters and by the Label table.
    assert not Assignment.objects.filter(batch=batch, state="open").exists()
    counted_by_item = Counter(
        Label.objects.filter(batch=batch, status="counted").values_list("item_id", flat=True)
    )
    n_items, per_item = STUDY_SIZES[_study_of(batch)]
    items = list(Item.objects.filter(batch=batch))
    assert len(items) == n_items
    for item in items:
        assert counted_by_item[item.pk] == per_item, (item.item_id, counted_by_item[item.pk])
        assert item.counted_count == per_item, (item.item_id, item.counted_count)
        assert item.reserved_count == item.counted_count, (item.item_id, item.reserved_count)
        if batch.task_kind.comparison:  # a pair was shown A first and B first equally
            orders = Counter(
                Label.objects.filter(item=item, status="counted").values_list(
                    "shown_order", flat=True
                )
            )
            assert abs(orders["ab"] - orders["ba"]) <= 1, (item.item_id, orders)
            assert (item.reserved_ab, item.reserved_ba) == (orders["ab"], orders["ba"])

    # Independence: no (annotator, item) pair twice, in labels or in leases.
    for model in (Label, Assignment):
        twice = (
            model.objects.filter(batch=batch)
            .values("annotator", "item")
            .annotate(n=Count("pk"))
            .filter(n__gt=1)
        )
        assert not twice.exists(), f"{model.__name__}: {list(twice)}"

    bundles = _check_bundles(batch) if batch.bundle_by != "none" else {}

    # Nothing lost: every acknowledged label is stored with its value and status, and every
    # stored label was acknowledged to its client (a lost answer is acknowledged by the retry).
    # The value is compared as the kind shows a stored label: as the worker gave it.
    kind = batch.task_kind
    labels = {
        str(label.assignment_id): label
        for label in Label.objects.filter(batch=batch).select_related("item", "annotator")
    }
    acked: dict[str, dict] = {}
    for report in reports:
        for record in report["records"]:
            label = labels.get(record["assignment"])
            assert label is not None, f"acknowledged label missing from the database: {record}"
            assert (kind.shown(label), label.status, label.item.item_id) == (
                _as_sent(record["value"]),
                record["status"],
                record["item_id"],
            ), record
            assert label.annotator.platform_id == record["worker"], record
            earlier = acked.setdefault(record["assignment"], record)
            assert earlier["status"] == record["status"], (earlier, record)
    assert set(acked) == set(labels), (
        f"labels never acknowledged: {sorted(set(labels) - set(acked))[:5]}"
    )
    submitted = Assignment.objects.filter(batch=batch, state="submitted").count()
    assert submitted == len(labels)
    # Each participant's own tally of regular labels (what quotas and progress read)
    # equals their label rows, whichever path stored them.
    given = Counter(label.annotator_id for label in labels.values())
    for participation in batch.participations.all():
        assert participation.regular_labels == given[participation.annotator_id], (
            participation.annotator_id,
            participation.regular_labels,
            given[participation.annotator_id],
        )

    # Surplus only on full items; every label is counted or surplus.
    statuses = Counter(label.status for label in labels.values())
    assert set(statuses) <= {"counted", "surplus"}, statuses
    assert statuses["counted"] == n_items * per_item
    assert len(labels) == statuses["counted"] + statuses["surplus"]
    full = {item.pk for item in items if item.counted_count == item.target}
    for label in labels.values():
        if label.status == "surplus":
            assert label.item_id in full, label.item.item_id
    behaviours = Counter(r["behaviour"] for r in acked.values())
    late = [r for r in acked.values() if r["behaviour"] == "late"]
    return {
        "kind": _study_of(batch),
        **bundles,
        "items": n_items,
        "per_item": per_item,
        "labels": len(labels),
        "counted": statuses["counted"],
        "surplus": statuses["surplus"],
        "late_counted": sum(r["status"] == "counted" for r in late),
        "late_surplus": sum(r["status"] == "surplus" for r in late),
        "behaviours": dict(behaviours),
        "refused_at_entry": len(refused),
    }


def _report_rate(backend: str, setup: str, summary: dict, seconds: float, stats: Counter) -> None:
    rate = summary["labels"] / seconds
    if summary["kind"] != "absolute":  # the absolute study keeps the line its figures had
        backend = f"{backend} {summary['kind']}"
    line = (
        f"{backend}: {rate:.1f} labels/s ({summary['labels']} acknowledged labels, "
        f"{summary['counted']} counted + {summary['surplus']} surplus, in {seconds:.1f} s; "
        f"{stats['requests'] / seconds:.0f} requests/s, mean latency "
        f"{stats['request_ms_total'] / max(stats['requests'], 1):.0f} ms; {setup}; "
        f"{summary['items']} items, N={summary['per_item']}, lease {LEASE_SECONDS} s; "
        f"{datetime.now(UTC).strftime('%Y-%m-%d %H:%M UTC')})"
    )
    print(f"\n[concurrency] {line}\n[concurrency] client actions: {dict(stats)}")
    RESULTS_FILE.parent.mkdir(parents=True, exist_ok=True)
    lines = RESULTS_FILE.read_text().splitlines() if RESULTS_FILE.exists() else []
    lines = [old for old in lines if not old.startswith(f"{backend}:")] + [line]
    RESULTS_FILE.write_text("\n".join(sorted(lines)) + "\n")


def _merge_stats(reports) -> Counter:
    total: Counter = Counter()
    for report in reports:
        total.update(report.get("stats", {}))
    return total


# --- PostgreSQL: gunicorn workers and client processes --------------------------------


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _test_database_url() -> str:
    settings = connection.settings_dict
    user = urllib.parse.quote(settings.get("USER") or "")
    password = settings.get("PASSWORD") or ""
    credentials = user + (":" + urllib.parse.quote(password) if password else "")
    host = settings.get("HOST") or "localhost"
    port = settings.get("PORT") or "5432"
    name = urllib.parse.quote(settings["NAME"])
    return f"postgres://{credentials + '@' if credentials else ''}{host}:{port}/{name}"


def warm_wsgi_application():
    """gunicorn app factory: ``config.wsgi.application`` with the URLconf (so every view
    module) and the worker templates loaded. With ``--preload`` this runs once in the master,
    before any database connection exists, and every worker — also one respawned after a
    crash — forks warm instead of importing for seconds on its first request."""
    from django.template.loader import get_template
    from django.urls import get_resolver

    from config.wsgi import application

    _ = get_resolver().url_patterns
    for name in ("entry", "task", "unavailable"):
        get_template(f"annotation/{name}.html")
    return application


class GunicornServer:
    """gunicorn with several sync workers on the test database, on a free local port."""

    def __init__(self, log_path: Path, workers: int = 4):
        self.workers = workers
        self.log_path = log_path
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = None

    def __enter__(self):
        env = dict(os.environ)
        env.update(
            DATABASE_URL=_test_database_url(),
            DJANGO_SETTINGS_MODULE="config.settings",
            CONN_MAX_AGE="60",  # one database connection per worker, as deployed
            LOG_LEVEL="ERROR",
        )
        self.log = open(self.log_path, "w")  # closed in __exit__
        gunicorn = Path(sys.executable).with_name("gunicorn")
        self.process = subprocess.Popen(
            [
                str(gunicorn),
                "tests.annotation.test_concurrency:warm_wsgi_application()",
                "--preload",
                "--workers",
                str(self.workers),
                "--bind",
                f"127.0.0.1:{self.port}",
                "--timeout",
                "60",
                "--graceful-timeout",
                "2",
                "--no-control-socket",  # its default path is shared by every gunicorn on the host
                "--log-level",
                "warning",
            ],
            cwd=BASE_DIR,
            env=env,
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )
        started = time.monotonic()
        while time.monotonic() - started < 30:
            if self.process.poll() is not None:
                raise RuntimeError(f"gunicorn exited at start:\n{self.log_tail()}")
            try:
                conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=5)
                conn.request("GET", "/work/no-such-batch/?worker=probe")
                status = conn.getresponse().status
                conn.close()
                if status == 404:
                    return self
            except OSError:
                pass
            time.sleep(0.1)
        self.__exit__(None, None, None)
        raise RuntimeError(f"gunicorn did not answer within 30 s:\n{self.log_tail()}")

    def worker_pids(self) -> list[int]:
        children = Path(f"/proc/{self.process.pid}/task/{self.process.pid}/children")
        try:
            return [int(pid) for pid in children.read_text().split()]
        except OSError:
            return []

    def kill_one_worker(self) -> bool:
        """SIGKILL one worker mid-run (a crashed server process); the master respawns it."""
        pids = self.worker_pids()
        random.shuffle(pids)
        for pid in pids:
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:  # exited meanwhile; take another
                continue
            return True
        return False

    def log_tail(self, lines: int = 40) -> str:
        try:
            return "\n".join(self.log_path.read_text().splitlines()[-lines:])
        except OSError:
            return ""

    def __exit__(self, *exc):
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)  # quick shutdown: the clients are done
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)
        self.log.close()
        return False


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", list(STUDY_SIZES))
def test_postgresql_many_server_and_client_processes_keep_exactly_n(tmp_path, kind):
    if connection.vendor != "postgresql":
        pytest.skip(
            "needs PostgreSQL (DATABASE_URL=postgres://...): several gunicorn processes "
            "must share the test database, which the SQLite test database cannot do"
        )
    seed = _seed()
    batch = _make_study(f"conc-postgres-{kind.replace('_', '-')}", kind)
    worker_ids = [f"pg-worker-{index:02d}" for index in range(40)]
    random.Random(seed).shuffle(worker_ids)
    n_clients = 5
    context = multiprocessing.get_context("spawn")
    drained = context.Event()
    log_path = tmp_path / "gunicorn.log"
    booting = time.time()
    with GunicornServer(log_path, workers=4) as server:
        started = time.time()
        deadline = started + DEADLINE_SECONDS
        clients = []
        for index in range(n_clients):
            out_path = tmp_path / f"client-{index}.json"
            process = context.Process(
                target=client_process,
                args=(
                    server.url,
                    batch.slug,
                    worker_ids[index::n_clients],
                    seed + index,
                    drained,
                    deadline,
                    str(out_path),
                    STUDY_KINDS.get(kind, kind),
                ),
                daemon=True,
            )
            process.start()
            clients.append((process, out_path))
        killed = []
        total_labels = batch.items.count() * batch.annotations_per_item

        def kill_a_worker_once(counted: int) -> None:
            if not killed and counted >= total_labels // 3:
                killed.append(server.kill_one_worker())

        try:
            drained_at = _supervise(
                batch,
                drained,
                lambda: any(process.is_alive() for process, _ in clients),
                deadline,
                on_progress=kill_a_worker_once,
            )
        finally:
            for process, _ in clients:
                process.join(timeout=5)
                if process.is_alive():
                    process.terminate()
                    process.join(timeout=5)
        clients_exited = time.time()
        assert server.process.poll() is None, "gunicorn died:\n" + server.log_tail()
        missing = [str(path) for _, path in clients if not path.exists()]
        assert not missing, f"client reports missing {missing} (seed {seed})"
        reports = [json.loads(path.read_text()) for _, path in clients]
        try:
            summary = _check_guarantees(batch, reports, worker_ids, drained_at)
        except AssertionError as failure:
            raise AssertionError(
                f"{failure}\n(seed {seed}; server log tail:\n{server.log_tail()})"
            ) from failure
        checked = time.time()
    stopped = time.time()
    work_started = min(report["started"] for report in reports)
    stats = _merge_stats(reports)
    stats["gunicorn_workers_killed"] = sum(killed)
    _report_rate(
        "postgresql",
        f"gunicorn 4 sync workers (one SIGKILLed mid-run), {n_clients} client processes "
        f"playing {len(worker_ids)} annotators, seed {seed}",
        summary,
        drained_at - work_started,
        stats,
    )
    print(f"[concurrency] outcome: {summary}")
    print(
        f"[concurrency] phases: gunicorn up {started - booting:.1f} s, clients entered "
        f"{work_started - started:.1f} s, drained {drained_at - work_started:.1f} s, "
        f"all told done {max(r['ended'] for r in reports) - drained_at:.1f} s, "
        f"client processes exited {clients_exited - max(r['ended'] for r in reports):.1f} s, "
        f"checks {checked - clients_exited:.1f} s, gunicorn stopped {stopped - checked:.1f} s"
    )


# --- SQLite: one threaded server process and client threads ---------------------------


@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("kind", list(STUDY_SIZES))
def test_sqlite_threaded_server_keeps_exactly_n(request, kind):
    if connection.vendor != "sqlite":
        pytest.skip("the SQLite scenario (one threaded server process) runs on SQLite only")
    live_server = request.getfixturevalue("live_server")
    # The expected 409s would each log a warning from the in-process server.
    request_logger = logging.getLogger("django.request")
    request.addfinalizer(lambda level=request_logger.level: request_logger.setLevel(level))
    request_logger.setLevel(logging.ERROR)
    seed = _seed()
    batch = _make_study(f"conc-sqlite-{kind.replace('_', '-')}", kind)
    n_threads, per_thread = 8, 5
    worker_ids = [f"lite-worker-{index:02d}" for index in range(n_threads * per_thread)]
    random.Random(seed).shuffle(worker_ids)
    drained = threading.Event()
    started = time.time()
    deadline = started + DEADLINE_SECONDS
    reports: list[dict] = [{} for _ in range(n_threads)]

    def play(index: int) -> None:
        try:
            reports[index] = run_annotators(
                live_server.url,
                batch.slug,
                worker_ids[index::n_threads],
                seed + index,
                drained,
                deadline,
                STUDY_KINDS.get(kind, kind),
            )
        except BaseException:
            reports[index] = {"errors": [traceback.format_exc()], "records": [], "finals": {}}
        finally:
            connections.close_all()

    threads = [
        threading.Thread(target=play, args=(index,), daemon=True) for index in range(n_threads)
    ]
    for thread in threads:
        thread.start()
    try:
        drained_at = _supervise(
            batch, drained, lambda: any(t.is_alive() for t in threads), deadline
        )
    finally:
        for thread in threads:
            thread.join(timeout=10)
    try:
        summary = _check_guarantees(batch, reports, worker_ids, drained_at)
    except AssertionError as failure:
        raise AssertionError(f"{failure}\n(seed {seed})") from failure
    work_started = min(report["started"] for report in reports)
    _report_rate(
        "sqlite",
        f"one threaded server process (live_server), {n_threads} client threads playing "
        f"{len(worker_ids)} annotators, seed {seed}",
        summary,
        drained_at - work_started,
        _merge_stats(reports),
    )
    print(f"[concurrency] outcome: {summary}")


# --- Two tabs of one annotator ---------------------------------------------------------


def _wait_until_blocked(count: int, timeout: float = 10) -> None:
    """Until ``count`` other sessions wait on a lock (PostgreSQL); a pause on SQLite, where
    they wait in BEGIN IMMEDIATE's busy handler and cannot be observed."""
    if connection.vendor != "postgresql":
        time.sleep(0.5)
        return
    started = time.monotonic()
    while time.monotonic() - started < timeout:
        with connection.cursor() as cursor:
            # Inside a transaction pg_stat_activity is a snapshot unless it is cleared.
            cursor.execute("SELECT pg_stat_clear_snapshot()")
            cursor.execute(
                "SELECT count(*) FROM pg_stat_activity "
                "WHERE datname = current_database() AND wait_event_type = 'Lock' "
                "AND pid <> pg_backend_pid()"
            )
            if cursor.fetchone()[0] >= count:
                return
        time.sleep(0.02)
    pytest.fail(f"the two tabs did not both reach the participation lock in {timeout} s")


@pytest.mark.django_db(transaction=True)
def test_two_tabs_racing_next_end_with_one_open_lease():
    """Both tabs' ``next`` are held at the annotator's lock, then released together."""
    from django.db.models import Sum

    from annotation.models import Assignment, Item, Participation
    from annotation.services.leasing import lease_next_item
    from tests.factories import make_batch, make_participant

    batch = make_batch(n_items=6, per_item=2, slug="conc-tabs")
    for round_number in range(4):
        participation = make_participant(batch, f"two-tabs-{round_number}")
        outcomes: list = [None, None]
        failures: list[str] = []

        def tab(index: int, participation=participation, outcomes=outcomes, failures=failures):
            try:
                outcomes[index] = lease_next_item(batch, participation)
            except BaseException:
                failures.append(traceback.format_exc())
            finally:
                connections.close_all()

        tabs = [threading.Thread(target=tab, args=(index,)) for index in range(2)]
        with transaction.atomic():
            # Holds the row lock (PostgreSQL) or the write lock (SQLite) both tabs need.
            Participation.objects.select_for_update().filter(pk=participation.pk).update(
                entry_params={"round": round_number}
            )
            for thread in tabs:
                thread.start()
            _wait_until_blocked(2)
        for thread in tabs:
            thread.join(timeout=30)
        assert not failures, failures
        first, second = outcomes
        assert first.assignment is not None and second.assignment is not None
        assert first.assignment.pk == second.assignment.pk
        assert (
            Assignment.objects.filter(annotator=participation.annotator, state="open").count() == 1
        )
        reserved = Item.objects.filter(batch=batch).aggregate(n=Sum("reserved_count"))["n"]
        assert reserved == round_number + 1
