"""Simulated annotators: aiohttp coroutines in one or more client processes.

Each annotator has its own cookies (kept by hand: one shared connection pool, no cookie
jar) and does what ``static/annotation/rating.js`` does in a browser behind the
production TLS proxy (``X-Forwarded-Proto: https``, an ``Origin`` header on POSTs):

* entry (not timed): ``GET /work/<slug>/?worker=<id>`` (sets ``sessionid`` and
  ``csrftoken``), ``POST /work/<slug>/consent`` with the form's ``csrfmiddlewaretoken``
  (the Start button; 302), ``GET /work/<slug>/task``;
* a cycle: ``POST /api/v1/work/<slug>/next`` with ``{}`` then
  ``POST /api/v1/assignments/<id>/label`` with ``{"value": k, "duration_ms": d}``, both
  JSON with the ``X-CSRFToken`` header read from the ``csrftoken`` cookie.

Against the ceiling the same client enters with ``GET /ceiling/entry`` and cycles over
``POST /ceiling/next`` and ``POST /ceiling/assignments/<id>/label``.

Closed loop: every annotator starts its next cycle as soon as the last one ended.
Open loop: cycles are started on a fixed schedule (``rate`` per second, split between
the client processes), each by an idle annotator of a pool; a start that finds no idle
annotator is counted as *missed*. Every process runs its own asyncio loop; the parent
tells them a common start time (``time.monotonic`` is shared by all processes).
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import random
import re
import time
from collections import deque
from dataclasses import dataclass, field

import aiohttp

NEXT, LABEL = 0, 1
KIND_NAMES = ("next", "label")
CSRF_FIELD = re.compile(rb'name="csrfmiddlewaretoken" value="([^"]+)"')
ERROR_BACKOFF = 0.1  # seconds an annotator waits after a failed request
ENTRY_PARALLEL = 16  # annotators entering at the same time
NO_WORK = False  # what a cycle returns when next hands out no assignment
CUT_OFF = "cut_off"  # status of a request still unanswered when the drain time ran out


@dataclass
class ClientPlan:
    target: str  # "platform" or "ceiling"
    base_url: str
    slug: str
    mode: str  # "closed" or "open"
    worker_ids: list[str]
    warmup: float
    duration: float
    drain: float  # seconds to wait for cycles still running at the end
    rate: float = 0.0  # open loop: cycles per second over all processes
    entry_limit: float = 900.0  # seconds to spend entering annotators at most
    proc_index: int = 0
    procs: int = 1
    seed: int = 0


@dataclass
class ClientResult:
    # one row per request: kind, start, end (time.monotonic) and status (HTTP code, or
    # the exception's name)
    kinds: list[int] = field(default_factory=list)
    starts: list[float] = field(default_factory=list)
    ends: list[float] = field(default_factory=list)
    statuses: list[int | str] = field(default_factory=list)
    acked: list[str] = field(default_factory=list)  # labels answered 2xx
    unknown: list[str] = field(default_factory=list)  # no answer, 5xx or cut off at the end
    refused: list[str] = field(default_factory=list)  # labels answered 4xx
    no_work: int = 0  # next answered 200 without an assignment
    entry_failures: list[str] = field(default_factory=list)
    entered: int = 0
    # open loop
    scheduled: list[float] = field(default_factory=list)  # scheduled start of each cycle
    cycle_ends: list[float] = field(default_factory=list)  # end of its label (nan: none)
    missed: list[float] = field(default_factory=list)  # scheduled starts with no idle annotator
    start_lags: list[float] = field(default_factory=list)  # actual - scheduled start


class Annotator:
    __slots__ = ("worker_id", "cookies", "rng")

    def __init__(self, worker_id: str, seed: int):
        self.worker_id = worker_id
        self.cookies: dict[str, str] = {}
        self.rng = random.Random(f"{seed}-{worker_id}")

    def cookie_header(self) -> str:
        return "; ".join(f"{k}={v}" for k, v in self.cookies.items())

    def remember(self, response: aiohttp.ClientResponse) -> None:
        for name, morsel in response.cookies.items():
            self.cookies[name] = morsel.value


class Client:
    def __init__(self, plan: ClientPlan, session: aiohttp.ClientSession):
        self.plan = plan
        self.session = session
        self.result = ClientResult()
        self.secure_origin = plan.base_url.replace("http://", "https://", 1)
        self.base_headers = {"X-Forwarded-Proto": "https"}
        if plan.target == "platform":
            self.next_url = f"{plan.base_url}/api/v1/work/{plan.slug}/next"
            self.label_url = plan.base_url + "/api/v1/assignments/{}/label"
        else:
            self.next_url = f"{plan.base_url}/ceiling/next"
            self.label_url = plan.base_url + "/ceiling/assignments/{}/label"
        self.inflight: set[str] = set()

    # ------------------------------------------------------------------ requests
    def _headers(self, annotator: Annotator, post: bool, referer: str | None = None) -> dict:
        headers = dict(self.base_headers)
        if annotator.cookies:
            headers["Cookie"] = annotator.cookie_header()
        if post:
            headers["Origin"] = self.secure_origin
            if referer:
                headers["Referer"] = referer
        return headers

    async def _get(self, annotator: Annotator, path: str) -> tuple[int, bytes]:
        async with self.session.get(
            self.plan.base_url + path,
            headers=self._headers(annotator, post=False),
            allow_redirects=False,
        ) as response:
            body = await response.read()
            annotator.remember(response)
            return response.status, body

    async def _post_json(self, annotator: Annotator, url: str, payload: dict):
        headers = self._headers(annotator, post=True)
        headers["Content-Type"] = "application/json"
        headers["X-CSRFToken"] = annotator.cookies.get("csrftoken", "")
        async with self.session.post(
            url, data=json.dumps(payload).encode(), headers=headers, allow_redirects=False
        ) as response:
            body = await response.read()
            annotator.remember(response)
            return response.status, body

    # ------------------------------------------------------------------ entry
    async def enter(self, annotator: Annotator) -> None:
        try:
            if self.plan.target == "ceiling":
                status, _ = await self._get(annotator, "/ceiling/entry")
                if status != 200:
                    raise RuntimeError(f"ceiling entry answered {status}")
                return
            slug = self.plan.slug
            entry_path = f"/work/{slug}/?worker={annotator.worker_id}"
            status, page = await self._get(annotator, entry_path)
            if status != 200:
                raise RuntimeError(f"entry page answered {status}")
            match = CSRF_FIELD.search(page)
            token = match.group(1).decode() if match else annotator.cookies.get("csrftoken", "")
            headers = self._headers(annotator, post=True, referer=self.secure_origin + entry_path)
            async with self.session.post(
                f"{self.plan.base_url}/work/{slug}/consent",
                data={"csrfmiddlewaretoken": token},
                headers=headers,
                allow_redirects=False,
            ) as response:
                await response.read()
                annotator.remember(response)
                if response.status != 302:
                    raise RuntimeError(f"consent answered {response.status}")
            status, _ = await self._get(annotator, f"/work/{slug}/task")
            if status != 200:
                raise RuntimeError(f"task page answered {status}")
        except Exception as error:  # reported, the annotator is left out
            self.result.entry_failures.append(f"{annotator.worker_id}: {error!r}")
            raise

    async def enter_all(self, annotators: list[Annotator]) -> list[Annotator]:
        """Enter every annotator (16 at a time); those not started within
        ``entry_limit`` seconds are left out (the open-loop pool then is smaller)."""
        gate = asyncio.Semaphore(ENTRY_PARALLEL)
        deadline = time.monotonic() + self.plan.entry_limit

        async def one(annotator):
            async with gate:
                if time.monotonic() > deadline:
                    return None
                try:
                    await self.enter(annotator)
                    return annotator
                except Exception:
                    return None

        entered = await asyncio.gather(*(one(a) for a in annotators))
        return [a for a in entered if a is not None]

    # ------------------------------------------------------------------ a cycle
    def _record(self, kind: int, start: float, status) -> float:
        end = time.monotonic()
        result = self.result
        result.kinds.append(kind)
        result.starts.append(start)
        result.ends.append(end)
        result.statuses.append(status)
        return end

    async def cycle(self, annotator: Annotator):
        """One next + one label: the label's end time, None when a request failed, or
        ``NO_WORK`` when next handed out nothing."""
        start = time.monotonic()
        try:
            status, body = await self._post_json(annotator, self.next_url, {})
        except asyncio.CancelledError:
            self._record(NEXT, start, CUT_OFF)
            raise
        except Exception as error:
            self._record(NEXT, start, type(error).__name__)
            return None
        self._record(NEXT, start, status)
        if status != 200:
            return None
        assignment = json.loads(body).get("assignment")
        if not assignment:
            self.result.no_work += 1
            return NO_WORK
        payload = {
            "value": annotator.rng.randint(1, 5),
            "duration_ms": annotator.rng.randint(1500, 30000),
        }
        self.inflight.add(assignment)
        start = time.monotonic()
        try:
            status, _ = await self._post_json(annotator, self.label_url.format(assignment), payload)
        except asyncio.CancelledError:
            self._record(LABEL, start, CUT_OFF)  # still in self.inflight: an unknown outcome
            raise
        except Exception as error:
            self.inflight.discard(assignment)
            self.result.unknown.append(assignment)
            self._record(LABEL, start, type(error).__name__)
            return None
        self.inflight.discard(assignment)
        end = self._record(LABEL, start, status)
        if 200 <= status < 300:
            self.result.acked.append(assignment)
            return end
        (self.result.unknown if status >= 500 else self.result.refused).append(assignment)
        return None

    # ------------------------------------------------------------------ modes
    async def closed_loop(self, annotators: list[Annotator], t0: float) -> None:
        end = t0 + self.plan.warmup + self.plan.duration

        async def loop(annotator: Annotator):
            # spread the first requests over 100 ms rather than one burst
            await asyncio.sleep(max(0.0, t0 - time.monotonic()) + annotator.rng.random() * 0.1)
            while time.monotonic() < end:
                finished = await self.cycle(annotator)
                if finished is NO_WORK:
                    return  # nothing left for this annotator (never expected: see run.py)
                if finished is None:
                    await asyncio.sleep(ERROR_BACKOFF)

        tasks = [asyncio.create_task(loop(a)) for a in annotators]
        await self._finish(tasks, end)

    async def open_loop(self, annotators: list[Annotator], t0: float) -> None:
        plan = self.plan
        end = t0 + plan.warmup + plan.duration
        slots = int(plan.rate * (plan.warmup + plan.duration))
        idle = deque(annotators)
        result = self.result
        tasks: set[asyncio.Task] = set()

        async def run(annotator: Annotator, scheduled: float, index: int):
            try:
                finished = await self.cycle(annotator)
                result.cycle_ends[index] = finished if finished else float("nan")
            finally:
                idle.append(annotator)

        for slot in range(plan.proc_index, slots, plan.procs):
            scheduled = t0 + slot / plan.rate
            delay = scheduled - time.monotonic()
            if delay > 0:
                await asyncio.sleep(delay)
            if not idle:
                result.missed.append(scheduled)
                continue
            result.start_lags.append(time.monotonic() - scheduled)
            result.scheduled.append(scheduled)
            result.cycle_ends.append(float("nan"))
            task = asyncio.create_task(run(idle.popleft(), scheduled, len(result.scheduled) - 1))
            tasks.add(task)
            task.add_done_callback(tasks.discard)
        await self._finish(list(tasks), end)

    async def _finish(self, tasks: list[asyncio.Task], end: float) -> None:
        """Let running cycles end (at most ``drain`` s after the end), then cut them off."""
        timeout = max(0.0, end - time.monotonic()) + self.plan.drain
        if tasks:
            _, pending = await asyncio.wait(tasks, timeout=timeout)
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        # labels sent but never answered: stored or not, both are allowed
        self.result.unknown.extend(self.inflight)
        self.inflight.clear()


async def _client_main(plan: ClientPlan, conn) -> None:
    connector = aiohttp.TCPConnector(limit=0, ttl_dns_cache=None)
    timeout = aiohttp.ClientTimeout(total=60)
    async with aiohttp.ClientSession(
        connector=connector, timeout=timeout, cookie_jar=aiohttp.DummyCookieJar()
    ) as session:
        client = Client(plan, session)
        annotators = [Annotator(w, plan.seed) for w in plan.worker_ids]
        entered = await client.enter_all(annotators)
        conn.send(("ready", len(entered), client.result.entry_failures[:5]))
        client.result.entered = len(entered)
        message = await asyncio.get_running_loop().run_in_executor(None, conn.recv)
        if message[0] != "go":
            return
        t0 = message[1]
        if plan.mode == "closed":
            await client.closed_loop(entered, t0)
        else:
            await client.open_loop(entered, t0)
        conn.send(("result", client.result))


def _client_process(plan: ClientPlan, conn) -> None:
    try:
        asyncio.run(_client_main(plan, conn))
    except Exception as error:
        conn.send(("error", repr(error)))
    finally:
        conn.close()


@dataclass
class Window:
    t0: float  # the common start (warm-up begins)
    start: float  # the measured window: [start, end)
    end: float


def run_clients(plans: list[ClientPlan], on_window_start, on_window_end) -> tuple[Window, list]:
    """Run one client process per plan; the callbacks are called at the window's edges.

    Returns the window and ``(pid, ClientResult)`` per process. ``on_window_start(pids)``
    and ``on_window_end(pids)`` take the snapshots (CPU, database counters).
    """
    context = multiprocessing.get_context("fork")
    workers = []
    for plan in plans:
        parent_end, child_end = context.Pipe()
        process = context.Process(target=_client_process, args=(plan, child_end), daemon=True)
        process.start()
        child_end.close()
        workers.append((process, parent_end))
    try:
        ready_limit = plans[0].entry_limit + 300
        for _, conn in workers:
            if not conn.poll(ready_limit):
                raise RuntimeError(f"a client process did not get ready in {ready_limit:g} s")
            message = conn.recv()
            if message[0] != "ready":
                raise RuntimeError(f"client process failed: {message[1]}")
            if message[1] == 0:
                raise RuntimeError(f"no annotator could enter: {message[2]}")
        plan = plans[0]
        t0 = time.monotonic() + 0.3
        window = Window(t0, t0 + plan.warmup, t0 + plan.warmup + plan.duration)
        for _, conn in workers:
            conn.send(("go", t0))
        pids = [process.pid for process, _ in workers]
        time.sleep(max(0.0, window.start - time.monotonic()))
        on_window_start(pids)
        time.sleep(max(0.0, window.end - time.monotonic()))
        on_window_end(pids)
        results = []
        for process, conn in workers:
            if not conn.poll(plan.drain + 120):
                raise RuntimeError("a client process did not report its results")
            message = conn.recv()
            if message[0] != "result":
                raise RuntimeError(f"client process failed: {message[1]}")
            results.append((process.pid, message[1]))
        return window, results
    finally:
        for process, conn in workers:
            conn.close()
            process.join(timeout=10)
            if process.is_alive():
                process.kill()
