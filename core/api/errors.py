"""DRF exception handler: service errors become JSON ``{"detail": ...}`` with their status.

A database outage answers 503 with ``Retry-After``; the statuses are the ones every page
uses (``core.http.errors.status_of``).
"""

from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler
from rest_framework.views import set_rollback

from core.errors import InvalidInput, ServiceError, Unavailable
from core.http.errors import database_unavailable, is_database_outage, status_of


def exception_handler(exc, context):
    if isinstance(exc, ServiceError):
        body = {"detail": str(exc)}
        if isinstance(exc, InvalidInput):
            body["field"] = exc.field
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
    if is_database_outage(exc):
        set_rollback()
        # one line in the log, not a traceback per request while the database restarts
        return database_unavailable(context["request"]._request, exc)
    return drf_exception_handler(exc, context)
