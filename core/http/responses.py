"""An error answer in the form the client reads: JSON on the API, a short page elsewhere."""

import json

from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string

API_PREFIX = "/api/"

TITLES = {
    400: "This request cannot be used",
    403: "No access",
    404: "Not found",
    409: "Conflict",
    413: "Too large",
    429: "Too many requests",
    500: "Something went wrong",
    503: "Temporarily unavailable",
}


def is_api_request(request: HttpRequest) -> bool:
    return request.path.startswith(API_PREFIX)


def error_response(
    request: HttpRequest,
    status: int,
    detail: str,
    *,
    field: str | None = None,
    retry_after: int | None = None,
) -> HttpResponse:
    """``{"detail": ..., "field": ...}`` for the API (and JSON clients of any path), else a
    page that says the same; ``Retry-After`` when the client should simply try again."""
    if is_api_request(request) or _wants_json(request):
        body = {"detail": detail}
        if field:
            body["field"] = field
        response = HttpResponse(json.dumps(body), status=status, content_type="application/json")
    else:
        html = render_to_string(
            "core/error.html",
            {
                "title": TITLES.get(status, "Error"),
                "detail": detail,
                "retry_after": retry_after,
            },
        )
        response = HttpResponse(html, status=status)
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def _wants_json(request: HttpRequest) -> bool:
    accept = request.headers.get("Accept", "")
    return "application/json" in accept and "text/html" not in accept
