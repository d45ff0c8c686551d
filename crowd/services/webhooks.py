"""Prolific's webhooks (docs.prolific.com, "Webhooks": Verifying, Receiving, Idempotency).

A request is trusted only when ``X-Prolific-Request-Signature`` is
base64(HMAC-SHA256(PROLIFIC_WEBHOOK_SECRET, X-Prolific-Request-Timestamp + raw body)) and
the timestamp is within ``MAX_AGE_SECONDS`` of now (a replayed request is refused). Each
``X-Event-ID`` is applied once: a repeat answers 200 and changes nothing. Every request
is recorded as a ``WebhookEvent`` with what became of it.
"""

import base64
import hashlib
import hmac
import json
import time
from dataclasses import dataclass

from django.conf import settings
from django.db import IntegrityError, transaction

from core.audit import Actor
from crowd.models import Platform, WebhookEvent
from crowd.services.submissions import apply_status, batches_for_prolific_submission

MAX_AGE_SECONDS = 300
BODY_KEPT = 4000
SUBMISSION_STATUS_CHANGE = "submission.status.change"
WEBHOOK_ACTOR = Actor("Prolific webhook")


@dataclass(frozen=True)
class Reply:
    status: int
    payload: dict


def signature(secret: str, timestamp: str, body: bytes) -> str:
    digest = hmac.new(secret.encode(), timestamp.encode() + body, hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def receive_prolific(body: bytes, headers, now: float | None = None) -> Reply:
    """Check, de-duplicate and apply one webhook request."""
    now = time.time() if now is None else now
    text = body.decode("utf-8", "replace")[:BODY_KEPT]
    secret = settings.PROLIFIC_WEBHOOK_SECRET
    given = headers.get("X-Prolific-Request-Signature", "")
    timestamp = headers.get("X-Prolific-Request-Timestamp", "")
    if (
        not secret
        or not given
        or not timestamp
        or not hmac.compare_digest(signature(secret, timestamp, body), given)
    ):
        _refused(WebhookEvent.Outcome.BAD_SIGNATURE, text, "signature does not match")
        return Reply(401, {"detail": "The request signature is missing or wrong."})
    try:
        sent_at = float(timestamp)
    except ValueError:
        sent_at = None
    if sent_at is None or abs(now - sent_at) > MAX_AGE_SECONDS:
        _refused(WebhookEvent.Outcome.STALE, text, f"timestamp {timestamp!r}")
        return Reply(401, {"detail": "The request timestamp is too old or not a time."})
    event_id = headers.get("X-Event-ID", "").strip()[:200] or None
    try:
        event = json.loads(body)
    except ValueError:
        event = None
    if not isinstance(event, dict):
        _store(event_id, WebhookEvent.Outcome.UNUSABLE, text, detail="body is not a JSON object")
        return Reply(400, {"detail": "The body is not a JSON object."})
    fields = {
        "event_type": str(event.get("event_type", ""))[:100],
        "resource_id": str(event.get("resource_id", ""))[:200],
        "status": str(event.get("status", ""))[:32],
    }
    try:
        with transaction.atomic():
            record = _store(event_id, WebhookEvent.Outcome.APPLIED, text, **fields)
            outcome, detail = _apply(event, fields)
            record.outcome, record.detail = outcome, detail
            record.save(update_fields=["outcome", "detail"])
    except IntegrityError:
        _store(
            None, WebhookEvent.Outcome.DUPLICATE, text, detail=f"X-Event-ID {event_id}", **fields
        )
        return Reply(200, {"detail": "Already received: nothing changed.", "duplicate": True})
    return Reply(200, {"detail": detail, "outcome": outcome})


def _apply(event: dict, fields: dict) -> tuple[str, str]:
    if fields["event_type"] != SUBMISSION_STATUS_CHANGE:
        return WebhookEvent.Outcome.UNUSABLE, f"event type {fields['event_type']!r} is not used"
    participant_id = str(event.get("participant_id", ""))[:200]
    if not fields["resource_id"] or not participant_id or not fields["status"]:
        return WebhookEvent.Outcome.UNUSABLE, "resource_id, participant_id or status missing"
    batches = batches_for_prolific_submission(fields["resource_id"], participant_id)
    if not batches:
        return WebhookEvent.Outcome.UNKNOWN_SUBMISSION, "no batch knows this submission"
    released = 0
    for batch in batches:
        released += apply_status(
            batch,
            Platform.PROLIFIC,
            submission_id=fields["resource_id"],
            participant_id=participant_id,
            status=fields["status"],
            actor=WEBHOOK_ACTOR,
        )["released"]
    return (
        WebhookEvent.Outcome.APPLIED,
        f"status {fields['status']} stored; {released} lease(s) released",
    )


def _store(event_id, outcome, text, detail="", **fields) -> WebhookEvent:
    return WebhookEvent.objects.create(
        platform=Platform.PROLIFIC,
        event_id=event_id,
        outcome=outcome,
        body=text,
        detail=detail,
        **fields,
    )


def _refused(outcome, text, detail) -> None:
    _store(None, outcome, text, detail=detail)
