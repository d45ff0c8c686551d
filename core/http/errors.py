"""Errors nobody handled, answered clearly instead of with a traceback page.

``ErrorResponseMiddleware.process_exception`` sees what a view raised:

* a ``ServiceError`` → its status (``status_of``), e.g. ``InvalidInput`` → 400;
* the database unreachable (``OperationalError``/``InterfaceError``: a restart, a
  failover, a full connection table) → 503 with ``Retry-After``, logged as one line;
* anything else under ``/api/`` → 500 JSON ``{"detail": ...}`` (the traceback is logged).

The ``handler400``/``403``/``404``/``500`` views (``config/urls.py``) answer what fails
outside views (a bad Host header, a session that cannot be saved) the same way: JSON on
the API, a short page elsewhere.
"""

import logging
import sys

from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse
from django.utils.translation import gettext_lazy as _

from core.errors import (
    Conflict,
    InvalidInput,
    NotFound,
    ServiceError,
    TemporarilyUnavailable,
    TooLarge,
    Unavailable,
)
from core.http.responses import error_response, is_api_request

logger = logging.getLogger(__name__)

# How long a client should wait before retrying after the database failed to answer.
DATABASE_RETRY_AFTER_SECONDS = 5

# what each of these answers says (in the participant's language on their addresses)
DATABASE_NOT_ANSWERING = _(
    "The database is not answering at the moment; try again in a few seconds."
)
SERVER_FAILED = _("The server failed to answer this request; the error has been logged.")
BODY_TOO_LARGE = _("The request body is larger than this server accepts.")
TOO_MANY_FIELDS = _("The request has too many form fields.")
UNREADABLE = _("The request could not be read.")
FORBIDDEN = _("You may not open this address.")
NOTHING_HERE = _("There is nothing at this address.")

STATUS_BY_ERROR = [
    (InvalidInput, 400),
    (NotFound, 404),
    (Conflict, 409),
    (Unavailable, 403),
    (TemporarilyUnavailable, 503),
    (TooLarge, 413),
]


def status_of(error: ServiceError) -> int:
    """The HTTP status of a service error (400 for any other kind of refused input)."""
    for error_class, status in STATUS_BY_ERROR:
        if isinstance(error, error_class):
            return status
    return 400


def is_database_outage(error: BaseException) -> bool:
    return isinstance(error, OperationalError | InterfaceError)


def database_unavailable(request: HttpRequest, error: BaseException) -> HttpResponse:
    logger.warning(
        "database unavailable on %s %s: %s: %s",
        request.method,
        request.path,
        type(error).__name__,
        str(error).strip().splitlines()[0] if str(error).strip() else "",
    )
    return error_response(
        request,
        503,
        DATABASE_NOT_ANSWERING,
        retry_after=DATABASE_RETRY_AFTER_SECONDS,
    )


class ErrorResponseMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception):
        if isinstance(exception, ServiceError):
            return error_response(
                request,
                status_of(exception),
                str(exception),
                field=getattr(exception, "field", None),
                retry_after=getattr(exception, "retry_after", None),
            )
        if is_database_outage(exception):
            return database_unavailable(request, exception)
        if is_api_request(request):
            logger.error(
                "unhandled error on %s %s", request.method, request.path, exc_info=exception
            )
            return _server_error(request)
        return None  # a page: Django logs it and renders handler500


def _server_error(request: HttpRequest) -> HttpResponse:
    return error_response(request, 500, SERVER_FAILED)


# ---------------------------------------------------------------- URLconf handlers


def bad_request(request: HttpRequest, exception=None) -> HttpResponse:
    if isinstance(exception, RequestDataTooBig):
        return error_response(request, 413, BODY_TOO_LARGE)
    if isinstance(exception, TooManyFieldsSent):
        return error_response(request, 400, TOO_MANY_FIELDS)
    return error_response(request, 400, UNREADABLE)


def permission_denied(request: HttpRequest, exception=None) -> HttpResponse:
    return error_response(request, 403, FORBIDDEN)


def page_not_found(request: HttpRequest, exception=None) -> HttpResponse:
    return error_response(request, 404, NOTHING_HERE)


def server_error(request: HttpRequest) -> HttpResponse:
    # Called while the exception is being handled: a database outage is a 503.
    error = sys.exc_info()[1]
    if error is not None and is_database_outage(error):
        return database_unavailable(request, error)
    return _server_error(request)
