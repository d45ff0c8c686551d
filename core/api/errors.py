"""DRF exception handler: service errors become JSON ``{"detail": ...}`` with their status.

A database outage answers 503 with ``Retry-After``; the statuses are the ones every page
uses (``core.http.errors.status_of``).
"""

from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from core.errors import ServiceError, Unavailable, field_named
from core.http.errors import database_unavailable, is_database_outage, status_of


def exception_handler(exc, context):
    if isinstance(exc, ServiceError):
        body = {"detail": str(exc)}
        field = field_named(exc)
        if field:
            body["field"] = field
        if exc.code:
            body["code"] = exc.code
        if isinstance(exc, Unavailable):
            body["state"] = exc.state
        if getattr(exc, "problems", None):  # an import's FILE:LINE: field: message list
            body["problems"] = list(exc.problems)
        response = Response(body, status=status_of(exc))
        retry_after = getattr(exc, "retry_after", None)
        if retry_after is not None:
            response["Retry-After"] = str(retry_after)
        return response
    if isinstance(exc, ValidationError) and isinstance(exc.detail, dict | list):
        return Response(_validation_body(exc.detail), status=exc.status_code)
    if is_database_outage(exc):
        set_rollback()
        # one line in the log, not a traceback per request while the database restarts
        return database_unavailable(context["request"]._request, exc)
    return drf_exception_handler(exc, context)


def _validation_body(detail) -> dict:
    """A serializer's errors (``{"field": ["message", ...], ...}``) in the shape of every
    other error of the API (API.md, "Errors"): ``detail`` the first as ``field: message``,
    ``field`` its field, and ``problems`` all of them when there are several."""
    problems = _field_messages(detail, "")
    field, message = problems[0] if problems else ("", "invalid input")
    body = {"detail": f"{field}: {message}" if field else message}
    if field:
        body["field"] = field
    if len(problems) > 1:
        body["problems"] = [f"{name}: {text}" if name else text for name, text in problems]
    return body


def _field_messages(detail, field: str) -> list[tuple[str, str]]:
    """(field, message) pairs of a serializer's nested errors; nested fields by dots
    (``kind_settings.max_words``), list entries by their index."""
    if isinstance(detail, dict):
        pairs = []
        for key, value in detail.items():
            name = "" if key == api_settings.NON_FIELD_ERRORS_KEY else str(key)
            pairs += _field_messages(value, ".".join(part for part in (field, name) if part))
        return pairs
    if isinstance(detail, list):
        pairs = []
        for index, value in enumerate(detail):
            nested = isinstance(value, dict | list)
            pairs += _field_messages(value, f"{field}.{index}" if nested and field else field)
        return pairs
    return [(field, str(detail))]
