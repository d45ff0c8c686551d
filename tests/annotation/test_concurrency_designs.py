"""Exactly N per item under real concurrency with the study's instrument switched on
(SPEC.md, guarantees 1, 2, 3 and 7; "Measurement validity").

One study — attention checks (``check_every=2``, ``exclude_after_failed_checks=2``),
repeats (``repeat_every=3``), "I can't judge this" (``allow_cant_judge``) and a
per-annotator quota — worked by crowdworkers through the HTTP API, on the real servers of
``test_concurrency.py`` (its client browser, its gunicorn server and its supervisor are
reused):

* PostgreSQL: gunicorn with several worker processes, played by client processes;
* SQLite: pytest-django's threaded ``live_server``, played by client threads.

Among the workers, a spammer answers 1 to everything and fails the checks (gold 5), so
the policy excludes them at the second failure; the honest workers pass items ("can't
judge"), abandon leases, answer late and click twice. Meanwhile an admin excludes an
honest worker through the staff page while others hold leases, and includes them again.

At the end every regular item holds exactly N counted labels, its counters equal its
labels, every label's status is one SPEC allows (``counted``, ``surplus``, ``excluded``,
``check``, ``repeat``, ``cant_judge``) and is where SPEC puts it, every acknowledged label
is stored, and nobody labelled an item twice except as a repeat.

The client code uses only the standard library (spawned client processes import this
module without setting Django up); ``CONCURRENCY_SEED=<seed>`` fixes the clients' choices.
"""

import json
import logging
import multiprocessing
import random
import threading
import time
import traceback
from collections import Counter
from datetime import datetime
from pathlib import Path

import pytest
from django.db import connection, connections

from tests.annotation.test_concurrency import (
    COMPLETION_URL,
    FULL_NOTICES,
    WAITING_PAGE,
    GunicornServer,
    ProtocolError,
    WorkerBrowser,
    _seed,
    _state_summary,
    _supervise,
)

# slow (over 5 s with the server's start), yet also run in CI's SQLite pass, as
# test_concurrency.py: the threaded server on SQLite is a scenario of its own
pytestmark = [pytest.mark.slow, pytest.mark.both_databases]

N_ITEMS = 12
PER_ITEM = 3
N_CHECKS = 6
GOLD = 5
QUOTA = 6
LEASE_SECONDS = 2
N_HONEST = 16  # enough that passes, abandons and exclusions still leave N for every item
DEADLINE_SECONDS = 60
SPAMMER = "spammer"
CHECK_PREFIX = "gold-"
# every status a label may have (SPEC.md, guarantees 3 and 7; "Measurement validity")
ALLOWED_STATUSES = {"counted", "surplus", "excluded", "check", "repeat", "cant_judge"}
REGULAR_STATUSES = {"counted", "surplus", "excluded"}
# reasons of ``next`` that end a worker's part in the study
DONE_REASONS = {"drained", "nothing_left_for_you", "quota_reached"}
WAIT_REASONS = {"wait", "busy"}

# what an honest worker does with a lease (relative weights)
BEHAVIOURS = [
    ("normal", 55),
    ("cant_judge", 12),  # "I can't judge this": the slot goes back at once
    ("double_submit", 10),  # the same answer twice (a double click)
    ("abandon", 10),  # never answers; asks again after the lease expired
    ("late", 13),  # answers after the lease expired (counted, surplus, check or repeat)
]


# --------------------------------------------------------------------------------------
# Client side: standard library only.
# --------------------------------------------------------------------------------------


class Worker:
    def __init__(self, worker_id: str, browser: WorkerBrowser, ready_at: float):
        self.worker_id = worker_id
        self.browser = browser
        self.ready_at = ready_at
        self.entered = False
        self.finished = False
        self.acked: set[str] = set()  # assignments with an acknowledged label
        # of which answered counted, surplus or excluded: regular items, and checks and
        # repeats too (their answer says "counted": it never tells which items were checks)
        self.regular_acked = 0
        self.leases: dict[str, str] = {}  # assignment -> item id, as handed out
        self.pending_late: tuple[str, str, int] | None = None


def run_design_workers(
    base_url: str, slug: str, worker_ids: list[str], seed: int, drained, deadline: float
) -> dict:
    """Play ``worker_ids`` against the server until each is told they are done (after the
    batch drained, for anyone excluded). Returns ``records`` (every acknowledged label),
    ``errors`` (protocol violations), ``finals`` (each worker's last ``next``),
    ``second_looks`` (assignments of an item the worker had been handed before) and
    ``after_drain`` (leases handed out after the batch drained)."""
    rng = random.Random(seed)
    stats: Counter = Counter()
    records: list[dict] = []
    errors: list[str] = []
    finals: dict[str, dict] = {}
    second_looks: list[str] = []
    after_drain: list[str] = []
    names, weights = zip(*BEHAVIOURS, strict=True)

    def post_label(worker: Worker, assignment: str, body: dict):
        return worker.browser.request(
            "POST", f"/api/v1/assignments/{assignment}/label", json_body=body
        )

    def acknowledge(worker, assignment, body, code, answer, behaviour, expect_codes):
        if worker.browser.resent:  # a lost first attempt may have stored it already
            expect_codes = set(expect_codes) | {200}
        if code not in expect_codes or not isinstance(answer, dict):
            raise ProtocolError(
                f"{behaviour} label of {assignment}: HTTP {code} {answer!r}, "
                f"expected {sorted(expect_codes)}"
            )
        status = answer.get("status")
        if status not in ALLOWED_STATUSES:
            raise ProtocolError(f"{behaviour} label of {assignment}: status {answer!r}")
        if body.get("cant_judge") and status != "cant_judge":
            raise ProtocolError(f"a pass of {assignment} answered {answer!r}")
        if assignment not in worker.acked:  # the first acknowledgement of this label
            worker.acked.add(assignment)
            worker.regular_acked += status in REGULAR_STATUSES
        records.append(
            {
                "worker": worker.worker_id,
                "assignment": assignment,
                "item_id": worker.leases[assignment],
                "value": body.get("value"),
                "cant_judge": bool(body.get("cant_judge")),
                "status": status,
                "code": code,
                "behaviour": behaviour,
            }
        )
        stats[f"status_{status}"] += 1
        return status

    def finish(worker: Worker, body: dict) -> None:
        reason, ending = body["reason"], body.get("ending")
        if reason == "excluded":
            ok = ending == "screened_out" and not body.get("completion_code")
        elif worker.regular_acked:
            ok = ending == "completed" and bool(body.get("completion_code"))
        else:  # an invitation-link worker who did no regular item: a plain thank you
            ok = ending == "thanks" and not body.get("completion_code")
        if not ok:
            raise ProtocolError(f"ending after {worker.regular_acked} regular labels: {body!r}")
        finals[worker.worker_id] = body
        worker.finished = True

    def ask(worker: Worker) -> dict:
        code, body = worker.browser.request("POST", f"/api/v1/work/{slug}/next", json_body={})
        if code != 200 or not isinstance(body, dict) or "assignment" not in body:
            raise ProtocolError(f"next: HTTP {code} {body!r}")
        if body["assignment"] is None:
            return body
        assignment, item_id = body["assignment"], body["item"]["item_id"]
        if assignment not in worker.leases and item_id in worker.leases.values():
            second_looks.append(assignment)  # only a repeat may do this (checked later)
        worker.leases[assignment] = item_id
        if body["progress"]["done"] > worker.regular_acked:
            raise ProtocolError(
                f"progress.done {body['progress']['done']}, but only {worker.regular_acked} "
                f"labels were acknowledged as counted to {worker.worker_id}"
            )
        if body["progress"]["quota"] != QUOTA:
            raise ProtocolError(f"quota {body['progress']!r}")
        return body

    def until(wall_time: float) -> float:
        return max(0.0, wall_time - time.time())

    def step(worker: Worker, is_drained: bool) -> None:
        now = time.monotonic()
        if worker.pending_late is not None:
            assignment, value = worker.pending_late[0], worker.pending_late[2]
            worker.pending_late = None
            body = {"value": value, "duration_ms": rng.randrange(500, 4000)}
            code, answer = post_label(worker, assignment, body)
            acknowledge(worker, assignment, body, code, answer, "late", {201})
            return
        body = ask(worker)
        if body["assignment"] is None:
            reason = body["reason"]
            stats[f"next_{reason}"] += 1
            # excluded: the spammer for good; anyone else may be included again meanwhile
            excluded_for_good = worker.worker_id == SPAMMER or is_drained
            if reason in DONE_REASONS or (reason == "excluded" and excluded_for_good):
                finish(worker, body)
            elif reason in WAIT_REASONS or reason == "excluded":
                worker.ready_at = now + rng.uniform(0.3, 0.6)
            else:
                raise ProtocolError(f"next without work: {body!r}")
            return
        assignment, item_id = body["assignment"], body["item"]["item_id"]
        if is_drained:
            after_drain.append(assignment)  # only a check or repeat may still be held
        stats["leases"] += 1
        expires_at = datetime.fromisoformat(body["expires_at"]).timestamp()
        if worker.worker_id == SPAMMER:
            value, behaviour = 1, "normal"  # fails every check (gold 5)
        else:
            value = GOLD if item_id.startswith(CHECK_PREFIX) else rng.randint(1, 5)
            behaviour = rng.choices(names, weights)[0]
        stats[behaviour] += 1
        answer_body = {"value": value, "duration_ms": rng.randrange(500, 4000)}
        if behaviour == "normal":
            code, answer = post_label(worker, assignment, answer_body)
            acknowledge(worker, assignment, answer_body, code, answer, behaviour, {201})
        elif behaviour == "cant_judge":
            answer_body = {"cant_judge": True, "duration_ms": rng.randrange(500, 4000)}
            code, answer = post_label(worker, assignment, answer_body)
            acknowledge(worker, assignment, answer_body, code, answer, behaviour, {201})
        elif behaviour == "double_submit":
            code, answer = post_label(worker, assignment, answer_body)
            first = acknowledge(worker, assignment, answer_body, code, answer, behaviour, {201})
            code, answer = post_label(worker, assignment, answer_body)
            second = acknowledge(worker, assignment, answer_body, code, answer, behaviour, {200})
            # an exclusion or an inclusion between the two may change a regular status
            if first != second and not {first, second} <= REGULAR_STATUSES:
                raise ProtocolError(f"retry of {assignment} changed status {first}->{second}")
        elif behaviour == "abandon":
            worker.ready_at = time.monotonic() + until(expires_at) + rng.uniform(0.3, 0.8)
        elif behaviour == "late":
            worker.pending_late = (assignment, item_id, value)
            worker.ready_at = time.monotonic() + until(expires_at) + rng.uniform(0.3, 0.9)

    def enter(worker: Worker) -> None:
        code, page = worker.browser.request("GET", f"/work/{slug}/?worker={worker.worker_id}")
        if code == 200 and isinstance(page, str) and WAITING_PAGE in page:
            worker.ready_at = time.monotonic() + rng.uniform(0.3, 0.6)
            return
        if code == 409 and worker.browser.resent and "csrftoken" in worker.browser.cookies:
            # the first answer was lost after the participation was bound to this session
            token = worker.browser.cookies["csrftoken"]
            worker.browser.request(
                "POST", f"/work/{slug}/switch", form={"csrfmiddlewaretoken": token}
            )
            code, page = worker.browser.request("GET", f"/work/{slug}/?worker={worker.worker_id}")
        if code != 200 or "csrftoken" not in worker.browser.cookies:
            raise ProtocolError(f"entry: HTTP {code}")
        if any(notice in page for notice in FULL_NOTICES):
            raise ProtocolError("told the study is full while every worker was needed")
        token = worker.browser.cookies["csrftoken"]
        code, _ = worker.browser.request(
            "POST", f"/work/{slug}/consent", form={"csrfmiddlewaretoken": token}
        )
        if code != 302:
            raise ProtocolError(f"consent: HTTP {code}")
        worker.entered = True

    begin = time.monotonic()
    workers = [
        Worker(worker_id, WorkerBrowser(base_url, stats), begin + rng.uniform(0, 1.0))
        for worker_id in worker_ids
    ]
    started = time.time()
    while True:
        if time.time() > deadline:
            unfinished = [w.worker_id for w in workers if not w.finished]
            errors.append(f"client gave up at the deadline; unfinished: {unfinished}")
            break
        active = [w for w in workers if not w.finished]
        if not active:
            break
        is_drained = drained.is_set()
        now = time.monotonic()
        ready = [w for w in active if w.ready_at <= now]
        if not ready:
            time.sleep(0.01)
            continue
        # the spammer goes fast: excluded early, long before the batch could drain
        spammer = [w for w in ready if w.worker_id == SPAMMER]
        worker = spammer[0] if spammer and rng.random() < 0.5 else rng.choice(ready)
        try:
            if worker.entered:
                step(worker, is_drained)
            else:
                enter(worker)
        except ProtocolError as error:
            errors.append(f"{worker.worker_id}: {error}")
            worker.finished = True
    return {
        "records": records,
        "errors": errors,
        "finals": finals,
        "second_looks": second_looks,
        "after_drain": after_drain,
        "stats": dict(stats),
        "started": started,
        "ended": time.time(),
    }


def design_client_process(base_url, slug, worker_ids, seed, drained, deadline, out_path):
    """Entry point of a spawned client process: play, then write the report as JSON."""
    try:
        report = run_design_workers(base_url, slug, worker_ids, seed, drained, deadline)
    except BaseException:
        report = {"errors": [traceback.format_exc()], "records": [], "finals": {}}
    Path(out_path).write_text(json.dumps(report))


# --------------------------------------------------------------------------------------
# Test side.
# --------------------------------------------------------------------------------------


def _make_design_study(slug: str):
    """A live absolute batch imported from an items file: ``N_ITEMS`` regular items and
    ``N_CHECKS`` attention checks (gold ``GOLD``), with the whole instrument on."""
    from tests.factories import imported_batch

    rows = []
    for index in range(N_ITEMS + N_CHECKS):
        check = index >= N_ITEMS
        row = {
            "item_id": f"{CHECK_PREFIX}{index}" if check else f"item-{index}",
            "query_id": f"{slug}-q{index}",
            "query": f"Question {index}?",
            "response_id": f"{slug}-r{index}",
            "response": f"Answer {index}" + (f" (please choose {GOLD})" if check else ""),
            "model": "model-x",
        }
        if check:
            row.update(check=True, gold=GOLD)
        rows.append(row)
    return imported_batch(
        "absolute", rows, slug=slug, per_item=PER_ITEM, title=f"Design {slug}",
        lease_seconds=LEASE_SECONDS, completion_url=COMPLETION_URL, check_every=2,
        exclude_after_failed_checks=2, repeat_every=3, allow_cant_judge=True,
        quota_per_annotator=QUOTA,
    )  # fmt: skip


def _worker_ids(prefix: str, seed: int) -> list[str]:
    ids = [SPAMMER] + [f"{prefix}-{index:02d}" for index in range(N_HONEST)]
    random.Random(seed).shuffle(ids)
    return ids


class AdminExcludesThenIncludes:
    """The supervisor's hook: once a quarter of the labels are counted, an admin excludes
    an honest worker with counted labels on the annotators page — when other workers
    hold open leases — and includes them again ``GAP_SECONDS`` later."""

    GAP_SECONDS = 0.6

    def __init__(self, batch):
        from tests.staff import staff_client

        self.batch = batch
        self.admin = staff_client("admin", "design-admin")
        self.victim = None
        self.excluded_at = None
        self.others_holding = 0
        self.included = None

    def _post(self, action: str) -> None:
        pseudonym = self.victim.annotator.pseudonym
        url = f"/manage/{self.batch.slug}/annotators/{pseudonym}/{action}"
        response = self.admin.post(url)
        assert response.status_code == 302, (action, response.status_code)

    def _pick_victim(self):
        from django.db.models import Count, Q
        from django.utils import timezone

        from annotation.models import Assignment, Participation

        now = timezone.now()
        open_leases = Assignment.objects.filter(
            batch=self.batch, state="open", expires_at__gt=now
        ).values_list("annotator_id", flat=True)
        holders = Counter(open_leases)
        candidates = (
            Participation.objects.filter(batch=self.batch, status="active")
            .exclude(annotator__platform_id=SPAMMER)
            .annotate(counted=Count("annotator__labels", filter=Q(
                annotator__labels__batch=self.batch, annotator__labels__status="counted")))
            .filter(counted__gt=0)
            .select_related("annotator")
        )  # fmt: skip
        # someone who holds a lease too, if there is one: it must be given back
        ranked = sorted(candidates, key=lambda p: (-holders[p.annotator_id], p.pk))
        for participation in ranked:
            others = sum(n for who, n in holders.items() if who != participation.annotator_id)
            if others:
                return participation, others
        return None, 0

    def __call__(self, counted: int) -> None:
        if self.victim is None and counted >= N_ITEMS * PER_ITEM // 4:
            victim, others = self._pick_victim()
            if victim is not None:
                self.victim, self.others_holding = victim, others
                self._post("exclude")
                self.excluded_at = time.monotonic()
        elif (
            self.included is None
            and self.excluded_at is not None
            and time.monotonic() - self.excluded_at >= self.GAP_SECONDS
        ):
            self.include()

    def include(self) -> None:
        self._post("include")
        self.included = time.monotonic()


def _check_design(batch, reports: list[dict], worker_ids, drained_at, admin) -> dict:
    from django.db.models import Count

    from annotation.models import Assignment, Item, Label, Participation
    from core.audit import history

    errors = [error for report in reports for error in report["errors"]]
    finals = {w: body for report in reports for w, body in report["finals"].items()}
    state = (
        f"{_state_summary(batch)}; the workers were told "
        f"{dict(Counter(body['reason'] for body in finals.values()))}"
    )
    assert not errors, "clients saw protocol violations:\n" + "\n".join(errors[:20]) + state
    assert drained_at is not None, f"the batch never drained; {state}"
    assert sorted(finals) == sorted(worker_ids), "not every worker was told they are done"

    # the admin's exclusion happened while others held leases, and was undone
    assert admin.victim is not None, "the admin never found someone to exclude"
    assert admin.others_holding > 0 and admin.included is not None
    victim = Participation.objects.get(pk=admin.victim.pk)
    assert victim.status == "active" and not victim.excluded_automatically
    actions = [
        event.action
        for event in history(batch).order_by("at", "pk")
        if (event.changes or {}).get("annotator") == victim.annotator.pseudonym
    ]
    assert actions == ["annotator.exclude", "annotator.include"], actions

    # exactly N counted labels per regular item; the counters equal the labels
    assert not Assignment.objects.filter(batch=batch, state="open").exists()
    labels = list(Label.objects.filter(batch=batch).select_related("item", "annotator"))
    counted = Counter(label.item_id for label in labels if label.status == "counted")
    items = list(Item.objects.filter(batch=batch))
    assert len(items) == N_ITEMS + N_CHECKS
    for item in items:
        expected = 0 if item.is_check else PER_ITEM
        assert counted[item.pk] == item.counted_count == expected, (item.item_id, counted[item.pk])
        assert item.reserved_count == item.counted_count, (item.item_id, item.reserved_count)

    # every status is one SPEC allows, where SPEC puts it
    statuses = Counter(label.status for label in labels)
    assert set(statuses) <= ALLOWED_STATUSES, statuses
    for status in ("check", "repeat", "cant_judge", "excluded", "counted"):
        assert statuses[status] > 0, f"the run made no {status} label: {dict(statuses)}"
    for label in labels:
        if label.status == "check":
            assert label.item.is_check and label.check_passed is not None, label.pk
        else:
            assert label.check_passed is None, label.pk
        if label.status in REGULAR_STATUSES | {"repeat"}:
            assert not label.item.is_check, (label.item.item_id, label.status)
        if label.status == "cant_judge":
            assert label.value is None, label.pk
    regular_items = {
        (label.annotator_id, label.item_id) for label in labels if label.status in REGULAR_STATUSES
    }
    for label in labels:
        if label.status == "repeat":  # of an item this worker labelled before
            assert (label.annotator_id, label.item_id) in regular_items, label.pk

    # the spammer: excluded by the policy at the second failed check, nothing counted
    spammer = Participation.objects.get(batch=batch, annotator__platform_id=SPAMMER)
    assert spammer.status == "excluded" and spammer.excluded_automatically
    assert spammer.exclusion_reason.startswith("failed 2 of "), spammer.exclusion_reason
    theirs = [label for label in labels if label.annotator_id == spammer.annotator_id]
    assert sum(label.status == "check" and not label.check_passed for label in theirs) == 2
    assert {label.status for label in theirs} <= {"excluded", "check", "repeat"}
    assert any(label.status == "excluded" for label in theirs)
    assert finals[SPAMMER]["reason"] == "excluded"
    # only the excluded keep excluded labels; the victim's all count again or are surplus
    # (an honest worker who passed on two checks — "I can't judge this" fails a check — is
    # excluded by the same policy; nobody else is)
    excluded_people = {label.annotator_id for label in labels if label.status == "excluded"}
    policy_excluded = set(
        Participation.objects.filter(batch=batch, status="excluded").values_list(
            "annotator_id", flat=True
        )
    )
    assert spammer.annotator_id in excluded_people <= policy_excluded
    for annotator_id in policy_excluded:
        failed = [
            label
            for label in labels
            if label.annotator_id == annotator_id and label.status == "check"
            if not label.check_passed
        ]
        assert len(failed) >= 2, annotator_id
    # honest workers pass every check they answer (a pass on one fails it)
    honest_checks = [
        label
        for label in labels
        if label.status == "check" and label.annotator_id != spammer.annotator_id
    ]
    assert honest_checks and all(
        label.check_passed or label.value is None and label.text is None for label in honest_checks
    )

    # independence: one lease and one label per worker and item, besides one repeat
    for rows in (
        Assignment.objects.filter(batch=batch).exclude(purpose="repeat"),
        Assignment.objects.filter(batch=batch, purpose="repeat"),
        Label.objects.filter(batch=batch).exclude(status="repeat"),
        Label.objects.filter(batch=batch, status="repeat"),
    ):
        twice = rows.values("annotator", "item").annotate(n=Count("pk")).filter(n__gt=1)
        assert not twice.exists(), list(twice)
    purposes = dict(Assignment.objects.filter(batch=batch).values_list("pk", "purpose"))
    second_looks = [a for report in reports for a in report.get("second_looks", [])]
    assert all(purposes[_uuid(a)] == "repeat" for a in second_looks), second_looks
    after_drain = [a for report in reports for a in report.get("after_drain", [])]
    assert all(purposes[_uuid(a)] in ("check", "repeat") for a in after_drain), after_drain

    # the quota, and each worker's tally of regular labels
    given = Counter(label.annotator_id for label in labels if label.status in REGULAR_STATUSES)
    for participation in batch.participations.all():
        assert participation.regular_labels == given[participation.annotator_id]
        assert given[participation.annotator_id] <= QUOTA, participation.annotator_id

    # nothing lost: every acknowledged label is stored as acknowledged, and every stored
    # label was acknowledged (statuses of the excluded and the re-included may move)
    moved = {spammer.annotator.platform_id, victim.annotator.platform_id}
    by_assignment = {str(label.assignment_id): label for label in labels}
    acked = {}
    for report in reports:
        for record in report["records"]:
            label = by_assignment.get(record["assignment"])
            assert label is not None, f"acknowledged label missing: {record}"
            assert label.annotator.platform_id == record["worker"], record
            assert label.item.item_id == record["item_id"], record
            assert label.value == (None if record["cant_judge"] else record["value"]), record
            if record["cant_judge"]:  # a pass on a repeat or a check is kept as that label
                purpose = purposes[label.assignment_id]
                kept_as = {"repeat": "repeat", "check": "check"}.get(purpose, "cant_judge")
                assert label.status == kept_as, (record, label.status)
                assert label.check_passed is (False if purpose == "check" else None), record
            elif purposes[label.assignment_id] in ("check", "repeat"):
                # stored as what it is, answered as a regular label (API.md)
                assert (label.status, record["status"]) == (
                    purposes[label.assignment_id],
                    "counted",
                ), record
            elif record["worker"] not in moved:
                assert label.status == record["status"], (record, label.status)
            acked[record["assignment"]] = record
    assert set(acked) == set(by_assignment), "labels never acknowledged"
    return {
        "labels": len(labels),
        "statuses": dict(statuses),
        "at_quota": sum(n == QUOTA for n in given.values()),
        "victim_labels": len(
            [label for label in labels if label.annotator_id == victim.annotator_id]
        ),
        "others_holding_leases_at_exclusion": admin.others_holding,
        "passes_on_repeats": sum(
            record["cant_judge"] and purposes[_uuid(assignment)] == "repeat"
            for assignment, record in acked.items()
        ),
    }


def _uuid(text: str):
    import uuid

    return uuid.UUID(text)


@pytest.mark.django_db(transaction=True)
def test_postgresql_exactly_n_with_checks_repeats_passes_quota_and_exclusions(tmp_path):
    if connection.vendor != "postgresql":
        pytest.skip("needs PostgreSQL (DATABASE_URL=postgres://...): gunicorn's processes")
    seed = _seed()
    batch = _make_design_study("design-postgres")
    admin = AdminExcludesThenIncludes(batch)
    worker_ids = _worker_ids("pg", seed)
    n_clients = 3
    context = multiprocessing.get_context("spawn")
    drained = context.Event()
    with GunicornServer(tmp_path / "gunicorn.log", workers=3) as server:
        deadline = time.time() + DEADLINE_SECONDS
        clients = []
        for index in range(n_clients):
            out_path = tmp_path / f"client-{index}.json"
            process = context.Process(
                target=design_client_process,
                args=(
                    server.url, batch.slug, worker_ids[index::n_clients], seed + index,
                    drained, deadline, str(out_path),
                ),
                daemon=True,
            )  # fmt: skip
            process.start()
            clients.append((process, out_path))
        try:
            drained_at = _supervise(
                batch,
                drained,
                lambda: any(process.is_alive() for process, _ in clients),
                deadline,
                on_progress=admin,
            )
        finally:
            for process, _ in clients:
                process.join(timeout=5)
                if process.is_alive():
                    process.terminate()
                    process.join(timeout=5)
        if admin.excluded_at is not None and admin.included is None:
            admin.include()
        missing = [str(path) for _, path in clients if not path.exists()]
        assert not missing, f"client reports missing {missing} (seed {seed})"
        reports = [json.loads(path.read_text()) for _, path in clients]
        try:
            summary = _check_design(batch, reports, worker_ids, drained_at, admin)
        except AssertionError as failure:
            raise AssertionError(
                f"{failure}\n(seed {seed}; server log tail:\n{server.log_tail()})"
            ) from failure
    print(f"[concurrency designs] postgresql, seed {seed}: {summary}")


@pytest.mark.django_db(transaction=True)
def test_sqlite_exactly_n_with_checks_repeats_passes_quota_and_exclusions(request):
    if connection.vendor != "sqlite":
        pytest.skip("the SQLite scenario (one threaded server process) runs on SQLite only")
    live_server = request.getfixturevalue("live_server")
    request_logger = logging.getLogger("django.request")
    request.addfinalizer(lambda level=request_logger.level: request_logger.setLevel(level))
    request_logger.setLevel(logging.ERROR)
    seed = _seed()
    batch = _make_design_study("design-sqlite")
    admin = AdminExcludesThenIncludes(batch)
    worker_ids = _worker_ids("lite", seed)
    n_threads = 4
    drained = threading.Event()
    deadline = time.time() + DEADLINE_SECONDS
    reports: list[dict] = [{} for _ in range(n_threads)]

    def play(index: int) -> None:
        try:
            reports[index] = run_design_workers(
                live_server.url, batch.slug, worker_ids[index::n_threads], seed + index,
                drained, deadline,
            )  # fmt: skip
        except BaseException:
            reports[index] = {"errors": [traceback.format_exc()], "records": [], "finals": {}}
        finally:
            connections.close_all()

    threads = [threading.Thread(target=play, args=(i,), daemon=True) for i in range(n_threads)]
    for thread in threads:
        thread.start()
    try:
        drained_at = _supervise(
            batch, drained, lambda: any(t.is_alive() for t in threads), deadline, on_progress=admin
        )
    finally:
        for thread in threads:
            thread.join(timeout=10)
    if admin.excluded_at is not None and admin.included is None:
        admin.include()
    try:
        summary = _check_design(batch, reports, worker_ids, drained_at, admin)
    except AssertionError as failure:
        raise AssertionError(f"{failure}\n(seed {seed})") from failure
    print(f"[concurrency designs] sqlite, seed {seed}: {summary}")
