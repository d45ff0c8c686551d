"""A small Prolific for the tests: a local HTTP server (in a thread) that follows the
documented requests and answers of the endpoints the crowd app uses, checks the token,
records every call, and fails on request.

Failures (``fail(method, path_prefix, kind, times=1, retry_after=1)``):

* ``"429"`` — refused before doing anything, with ``Retry-After``;
* ``"400"`` — refused before doing anything (a request Prolific will not carry out, such
  as a transition the submission's status does not allow);
* ``"500"`` — an error before doing anything;
* ``"500_after"`` — the request takes effect, then the answer is a 500;
* ``"timeout_after"`` — the request takes effect, then no answer within the client's
  timeout (the answer comes too late to be read).
"""

import json
import threading
import time
from dataclasses import dataclass, field
from decimal import Decimal
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from itertools import count
from urllib.parse import parse_qs, urlparse

TOKEN = "fake-prolific-token"
TIMEOUT_DELAY = 1.5  # longer than the tests' client timeout


@dataclass
class Call:
    method: str
    path: str
    body: object
    authorised: bool
    answered: int


@dataclass
class Failure:
    method: str
    prefix: str
    kind: str
    times: int
    retry_after: int


@dataclass
class FakeProlific:
    studies: dict = field(default_factory=dict)
    submissions: dict = field(default_factory=dict)  # id -> submission dict
    bulk_bonuses: dict = field(default_factory=dict)  # id -> {"study", "lines"}
    payments: list = field(default_factory=list)  # (bulk id, participant, Decimal) per pay
    calls: list = field(default_factory=list)
    failures: list = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    ids: count = field(default_factory=lambda: count(1))

    # ------------------------------------------------------------------ set-up
    def add_study(self, study_id: str, *, status="ACTIVE", places=10) -> None:
        self.studies[study_id] = {
            "id": study_id,
            "status": status,
            "total_available_places": places,
            "places_taken": 0,
        }

    def add_submission(self, study_id, participant_id, status="ACTIVE", submission_id=None) -> str:
        submission_id = submission_id or f"sub-{participant_id}"
        self.submissions[submission_id] = {
            "id": submission_id,
            "participant_id": participant_id,
            "status": status,
            "started_at": "2026-12-01T10:00:00Z",
            "completed_at": None,
            "study_id": study_id,
        }
        self._count_places(study_id)
        return submission_id

    def set_status(self, submission_id, status) -> None:
        self.submissions[submission_id]["status"] = status
        self._count_places(self.submissions[submission_id]["study_id"])

    def fail(self, method, prefix, kind, times=1, retry_after=1) -> None:
        self.failures.append(Failure(method, prefix, kind, times, retry_after))

    def writes(self, prefix: str = "") -> list[Call]:
        return [c for c in self.calls if c.method != "GET" and c.path.startswith(prefix)]

    def paid_per_participant(self) -> dict[str, Decimal]:
        totals: dict[str, Decimal] = {}
        for _, participant, amount in self.payments:
            totals[participant] = totals.get(participant, Decimal(0)) + amount
        return totals

    def _count_places(self, study_id) -> None:
        if study_id in self.studies:
            self.studies[study_id]["places_taken"] = sum(
                1
                for s in self.submissions.values()
                if s["study_id"] == study_id
                and s["status"] not in ("RETURNED", "TIMED-OUT", "REJECTED")
            )

    # ------------------------------------------------------------------ handling
    def handle(self, method: str, path: str, query: dict, body):
        """(status, answer body) for one authorised request."""
        parts = [part for part in path.split("/") if part]  # api v1 …
        tail = parts[2:]
        if tail[:1] == ["studies"] and len(tail) >= 2:
            study = self.studies.get(tail[1])
            if study is None:
                return 404, {"error": {"detail": "Not found."}}
            if len(tail) == 2 and method == "GET":
                return 200, dict(study)
            if len(tail) == 2 and method == "PATCH":
                places = body.get("total_available_places")
                if not isinstance(places, int) or places < study["places_taken"]:
                    return 400, {"error": {"detail": "total_available_places is invalid"}}
                study["total_available_places"] = places
                return 200, dict(study)
            if tail[2:] == ["transition"] and method == "POST":
                wanted = {"PAUSE": "PAUSED", "START": "ACTIVE"}.get(body.get("action"))
                if wanted is None:
                    return 400, {"error": {"detail": "unknown action"}}
                study["status"] = wanted
                return 200, dict(study)
            if tail[2:] == ["submissions"] and method == "GET":
                limit = int(query.get("limit", ["20"])[0])
                offset = int(query.get("offset", ["0"])[0])
                mine = [s for s in self.submissions.values() if s["study_id"] == tail[1]]
                return 200, {
                    "results": [dict(s) for s in mine[offset : offset + limit]],
                    "_links": {"next": {"href": None}},
                    "meta": {"count": len(mine)},
                }
        if tail[:1] == ["submissions"]:
            if tail[1:] == ["bulk-approve"] and method == "POST":
                ids = body.get("submission_ids") or []
                for submission_id in ids:
                    submission = self.submissions.get(submission_id)
                    if submission and submission["status"] == "AWAITING REVIEW":
                        submission["status"] = "APPROVED"
                return 200, {"message": "The request to bulk approve has been made successfully."}
            if tail[1:] == ["bonus-payments"] and method == "POST":
                lines = {}
                for line in (body.get("csv_bonuses") or "").strip().splitlines():
                    participant, amount = line.split(",")
                    if not any(
                        s["participant_id"] == participant for s in self.submissions.values()
                    ):
                        return 400, {"error": {"detail": f"{participant} did not take part"}}
                    lines[participant] = Decimal(amount)
                bulk_id = f"bulk-{next(self.ids)}"
                self.bulk_bonuses[bulk_id] = {"study": body.get("study_id"), "lines": lines}
                cents = float(sum(lines.values()) * 100)
                return 201, {
                    "id": bulk_id,
                    "study": body.get("study_id"),
                    "amount": cents,
                    "fees": round(cents / 3, 2),
                    "vat": 0.0,
                    "total_amount": round(cents * 4 / 3, 2),
                }
            if len(tail) == 3 and tail[2] == "transition" and method == "POST":
                submission = self.submissions.get(tail[1])
                if submission is None:
                    return 404, {"error": {"detail": "Not found."}}
                action = body.get("action")
                if submission["status"] != "AWAITING REVIEW":
                    return 400, {
                        "error": {"detail": f"cannot {action} a {submission['status']} submission"}
                    }
                if action == "REJECT" and (
                    len(body.get("message", "")) < 100 or not body.get("rejection_category")
                ):
                    return 400, {"error": {"detail": "a rejection needs a message and a category"}}
                new = {"APPROVE": "APPROVED", "REJECT": "REJECTED", "SCREEN_OUT": "SCREENED OUT"}
                if action not in new:
                    return 400, {"error": {"detail": "unknown action"}}
                submission["status"] = new[action]
                return 200, dict(submission)
        if tail[:1] == ["bulk-bonus-payments"] and tail[2:] == ["pay"] and method == "POST":
            bulk = self.bulk_bonuses.get(tail[1])
            if bulk is None:
                return 404, {"error": {"detail": "Not found."}}
            for participant, amount in bulk["lines"].items():
                self.payments.append((tail[1], participant, amount))
            return 202, None
        return 404, {"error": {"detail": f"no such endpoint {method} {path}"}}

    def failure_for(self, method: str, path: str) -> Failure | None:
        with self.lock:
            for failure in self.failures:
                if (
                    failure.times > 0
                    and failure.method == method
                    and path.startswith(failure.prefix)
                ):
                    failure.times -= 1
                    return failure
        return None


def _handler(fake: FakeProlific):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, *args):  # quiet
            pass

        def _serve(self, method: str):
            url = urlparse(self.path)
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length) if length else b""
            body = json.loads(raw) if raw else {}
            authorised = self.headers.get("Authorization") == f"Token {TOKEN}"
            call = Call(method, url.path, body, authorised, 0)
            fake.calls.append(call)
            if not authorised:
                return self._answer(call, 401, {"error": {"detail": "Invalid token."}})
            failure = fake.failure_for(method, url.path)
            if failure and failure.kind == "429":
                return self._answer(
                    call, 429, {"error": {"detail": "slow down"}}, failure.retry_after
                )
            if failure and failure.kind == "400":
                return self._answer(call, 400, {"error": {"detail": "not allowed now"}})
            if failure and failure.kind == "500":
                return self._answer(call, 500, {"error": {"detail": "boom"}})
            with fake.lock:
                status, answer = fake.handle(method, url.path, parse_qs(url.query), body)
            if failure and failure.kind == "500_after":
                return self._answer(call, 500, {"error": {"detail": "boom after"}})
            if failure and failure.kind == "timeout_after":
                time.sleep(TIMEOUT_DELAY)
            return self._answer(call, status, answer)

        def _answer(self, call, status, answer, retry_after=None):
            call.answered = status
            data = json.dumps(answer).encode() if answer is not None else b""
            try:
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                if retry_after is not None:
                    self.send_header("Retry-After", str(retry_after))
                self.end_headers()
                self.wfile.write(data)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up waiting (an injected timeout)

        def do_GET(self):
            self._serve("GET")

        def do_POST(self):
            self._serve("POST")

        def do_PATCH(self):
            self._serve("PATCH")

    return Handler


class FakeProlificServer:
    def __init__(self):
        self.fake = FakeProlific()
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(self.fake))
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> "FakeProlificServer":
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.server.shutdown()
        self.server.server_close()
