"""DRF exception handler: service errors become JSON ``{"detail": ...}`` with their status."""

from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from core.errors import (
    Conflict,
    InvalidInput,
    NotFound,
    ServiceError,
    Unavailable,
)

STATUS_BY_ERROR = [
    (InvalidInput, status.HTTP_400_BAD_REQUEST),
    (NotFound, status.HTTP_404_NOT_FOUND),
    (Conflict, status.HTTP_409_CONFLICT),
    (Unavailable, status.HTTP_403_FORBIDDEN),
]


def exception_handler(exc, context):
    if isinstance(exc, ServiceError):
        for error_class, code in STATUS_BY_ERROR:
            if isinstance(exc, error_class):
                body = {"detail": str(exc)}
                if isinstance(exc, InvalidInput):
                    body["field"] = exc.field
                if getattr(exc, "problems", None):
                    body["problems"] = list(exc.problems)
                return Response(body, status=code)
        body = {"detail": str(exc)}
        if getattr(exc, "problems", None):  # an import's FILE:LINE: field: message list
            body["problems"] = list(exc.problems)
        return Response(body, status=status.HTTP_400_BAD_REQUEST)
    return drf_exception_handler(exc, context)
