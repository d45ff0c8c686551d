"""Prolific's REST API (docs.prolific.com, "API Reference"), as the crowd app uses it.

Every request carries ``Authorization: Token <PROLIFIC_API_TOKEN>`` and a timeout, and
is recorded as a ``PlatformCall`` (what was sent, what came back or what failed).

Retries are bounded and depend on what a repeat could do:

* a ``429`` means the request was not processed: it is sent again after the
  ``Retry-After`` the answer names (at most ``MAX_RETRY_AFTER`` seconds), for every call;
* a ``5xx``, a timeout or a dropped connection may come after the request took effect:
  it is retried (with a short exponential backoff) only for calls that are safe to
  repeat — reads, submission transitions (a second one is refused once the first took
  effect) and setting up a bonus payment (nothing is paid until it is paid). Paying a
  bulk bonus payment is not idempotent (Prolific says so): its call is never repeated
  after such a failure, and the caller is told the outcome is ``Ambiguous``.
"""

import json
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from decimal import Decimal
from http.client import HTTPException

from django.conf import settings
from django.utils import timezone

from crowd.models import Platform, PlatformCall

MAX_ATTEMPTS = 4
BACKOFF_SECONDS = (0.2, 0.5, 1.0)
MAX_RETRY_AFTER = 30
RESPONSE_KEPT = 2000


class ProlificError(Exception):
    """The platform answered with a refusal (4xx other than 429): nothing changed there."""

    def __init__(self, status: int, message: str):
        super().__init__(f"Prolific answered {status}: {message}")
        self.status = status


class Ambiguous(Exception):
    """No usable answer (5xx, timeout, broken connection): the request may have taken effect."""


class NotConfigured(Exception):
    pass


@dataclass(frozen=True)
class Answer:
    status: int
    body: dict | list | None


def configured() -> bool:
    return bool(getattr(settings, "PROLIFIC_API_TOKEN", ""))


class ProlificClient:
    def __init__(self, token: str | None = None, base_url: str | None = None, timeout=None):
        self.token = token if token is not None else settings.PROLIFIC_API_TOKEN
        if not self.token:
            raise NotConfigured(
                "PROLIFIC_API_TOKEN is not set: create an API token in Prolific's settings "
                "and set it in the environment"
            )
        self.base_url = (base_url or settings.PROLIFIC_API_URL).rstrip("/")
        self.timeout = timeout if timeout is not None else settings.PROLIFIC_TIMEOUT_SECONDS

    # ------------------------------------------------------------------ the endpoints
    def study(self, study_id: str) -> dict:
        return self._call("GET", f"/api/v1/studies/{study_id}/").body or {}

    def submissions(self, study_id: str, page_size: int = 200) -> list[dict]:
        """Every submission of the study, page by page (``limit`` / ``offset``)."""
        found, offset = [], 0
        while True:
            page = (
                self._call(
                    "GET",
                    f"/api/v1/studies/{study_id}/submissions/?limit={page_size}&offset={offset}",
                ).body
                or {}
            )
            results = page.get("results", [])
            found += results
            if len(results) < page_size:
                return found
            offset += page_size

    def transition_submission(self, submission_id: str, action: str, **fields) -> dict:
        """``APPROVE``, ``REJECT`` (with ``message`` and ``rejection_category``),
        ``SCREEN_OUT`` …"""
        body = {"action": action, **{k: v for k, v in fields.items() if v}}
        return (
            self._call(
                "POST", f"/api/v1/submissions/{submission_id}/transition/", body, repeatable=True
            ).body
            or {}
        )

    def bulk_approve(self, study_id: str, submission_ids: list[str]) -> None:
        self._call(
            "POST",
            "/api/v1/submissions/bulk-approve/",
            {"study_id": study_id, "submission_ids": submission_ids},
            repeatable=True,
        )

    def set_up_bonuses(self, study_id: str, amounts: dict[str, Decimal]) -> dict:
        """Step 1 of 2: a bulk bonus payment (``participant_id,amount`` lines in the study's
        currency); nothing is paid yet. Answers ``id`` and ``total_amount`` (minor units)."""
        csv = "".join(f"{pid},{amount:.2f}\n" for pid, amount in amounts.items())
        return (
            self._call(
                "POST",
                "/api/v1/submissions/bonus-payments/",
                {"study_id": study_id, "csv_bonuses": csv},
                repeatable=True,
            ).body
            or {}
        )

    def pay_bonuses(self, bulk_id: str) -> None:
        """Step 2 of 2: pay. Not idempotent — never repeated after an unclear failure."""
        self._call("POST", f"/api/v1/bulk-bonus-payments/{bulk_id}/pay/", None, repeatable=False)

    def set_places(self, study_id: str, total_available_places: int) -> dict:
        return (
            self._call(
                "PATCH",
                f"/api/v1/studies/{study_id}/",
                {"total_available_places": total_available_places},
                repeatable=True,
            ).body
            or {}
        )

    def transition_study(self, study_id: str, action: str) -> dict:
        """``PAUSE`` or ``START``."""
        return (
            self._call(
                "POST",
                f"/api/v1/studies/{study_id}/transition/",
                {"action": action},
                repeatable=True,
            ).body
            or {}
        )

    # ------------------------------------------------------------------ the transport
    def _call(self, method: str, path: str, body=None, *, repeatable: bool | None = None):
        repeatable = method == "GET" if repeatable is None else repeatable
        data = json.dumps(body).encode() if body is not None else None
        for attempt in range(1, MAX_ATTEMPTS + 1):
            request = urllib.request.Request(self.base_url + path, data=data, method=method)
            request.add_header("Authorization", f"Token {self.token}")
            request.add_header("Accept", "application/json")
            if data is not None:
                request.add_header("Content-Type", "application/json")
            started, clock = timezone.now(), time.monotonic()
            status, text, error, retry_after = None, "", "", None
            try:
                with urllib.request.urlopen(request, timeout=self.timeout) as response:  # noqa: S310 - https URL from settings
                    status, text = response.status, response.read().decode("utf-8", "replace")
            except urllib.error.HTTPError as refused:
                status = refused.code
                text = refused.read().decode("utf-8", "replace")
                retry_after = refused.headers.get("Retry-After")
            except (TimeoutError, urllib.error.URLError, ConnectionError, HTTPException) as lost:
                error = f"{type(lost).__name__}: {lost}"
            if method != "GET":
                _record(method, path, body, attempt, status, text, error, started, clock)
            last = attempt == MAX_ATTEMPTS
            if status is not None and status < 400:
                return Answer(status, json.loads(text) if text.strip() else None)
            if status == 429 and not last:
                time.sleep(_seconds(retry_after, attempt))
                continue
            if status is not None and 400 <= status < 500 and status != 429:
                raise ProlificError(status, _message(text))
            # 5xx, 429 on the last attempt, or no answer at all
            if repeatable and not last:
                time.sleep(BACKOFF_SECONDS[min(attempt - 1, len(BACKOFF_SECONDS) - 1)])
                continue
            what = f"answered {status}" if status is not None else error
            if status == 429:
                raise ProlificError(429, "too many requests; try again later")
            raise Ambiguous(f"{method} {path}: {what}")
        raise AssertionError("unreachable")  # pragma: no cover


def _seconds(retry_after: str | None, attempt: int) -> float:
    try:
        return min(max(float(retry_after), 0.0), MAX_RETRY_AFTER)
    except (TypeError, ValueError):
        return BACKOFF_SECONDS[min(attempt - 1, len(BACKOFF_SECONDS) - 1)]


def _message(text: str) -> str:
    try:
        parsed = json.loads(text)
    except ValueError:
        return text[:300]
    if isinstance(parsed, dict):
        error = parsed.get("error", parsed)
        if isinstance(error, dict):
            return str(error.get("detail") or error.get("title") or error)[:300]
    return str(parsed)[:300]


def _record(method, path, body, attempt, status, text, error, started, clock) -> None:
    PlatformCall.objects.create(
        platform=Platform.PROLIFIC,
        method=method,
        path=path[:500],
        request_body=body,
        attempt=attempt,
        status_code=status,
        response_body=text[:RESPONSE_KEPT],
        error=error,
        started_at=started,
        duration_ms=int((time.monotonic() - clock) * 1000),
    )
