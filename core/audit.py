"""The audit trail: who changed what, when, for research provenance.

Every service that changes a study's state records one ``AuditEvent`` in the same
transaction as the change, naming its ``Actor``: a staff user (pages, API), the command
line, or an automatic policy (e.g. exclusion after failed attention checks). Reads for the
History tab, the API and the data card go through ``history``.
"""

from dataclasses import dataclass
from typing import Any

from django.contrib.contenttypes.models import ContentType
from django.db.models import QuerySet

from core.models import AuditEvent

COMMAND_LINE = "command line"
SYSTEM = "system"


@dataclass(frozen=True)
class Actor:
    """Who acts: a user, or a named non-user (the command line, a policy)."""

    name: str
    user: Any = None
    is_policy: bool = False

    @classmethod
    def of(cls, user) -> "Actor":
        if user is None or not getattr(user, "is_authenticated", False):
            return cls(SYSTEM)
        return cls(user.get_username(), user)

    @classmethod
    def command_line(cls) -> "Actor":
        return cls(COMMAND_LINE)

    @classmethod
    def policy(cls, name: str) -> "Actor":
        return cls(f"policy: {name}", is_policy=True)


def record(
    action: str,
    *,
    subject=None,
    actor: Actor | None = None,
    changes: dict | None = None,
    reason: str = "",
) -> AuditEvent:
    """Store one event. Call it inside the transaction of the change it describes."""
    actor = actor or Actor(SYSTEM)
    return AuditEvent.objects.create(
        actor=actor.user,
        actor_name=actor.name[:200],
        action=action,
        subject=subject,
        subject_label=str(subject)[:200] if subject is not None else "",
        changes=_jsonable(changes or {}),
        reason=reason,
    )


def diff(before: dict, after: dict) -> dict:
    """``{"field": [old, new]}`` for the fields whose value changed."""
    return {
        name: [before.get(name), value]
        for name, value in after.items()
        if before.get(name) != value
    }


def history(subject) -> QuerySet:
    """The subject's events, newest first."""
    content_type = ContentType.objects.get_for_model(type(subject))
    return AuditEvent.objects.filter(subject_type=content_type, subject_id=subject.pk)


def event_payload(event: AuditEvent) -> dict:
    return {
        "at": event.at,
        "actor": event.actor_name,
        "action": event.action,
        "subject": event.subject_label,
        "changes": event.changes,
        "reason": event.reason,
    }


def _jsonable(value):
    """Dates and other non-JSON values as text, so any diff can be stored."""
    if isinstance(value, dict):
        return {str(key): _jsonable(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(item) for item in value]
    if value is None or isinstance(value, str | int | float | bool):
        return value
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return str(value)
