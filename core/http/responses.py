"""An error answer in the form the client reads: JSON on the API, a short page elsewhere.

On a participant's address (``settings.PARTICIPANT_PATH_PREFIXES``) it is in their
language — the one their pages use, or, when the error comes before that is known (a
malformed link, an unknown address), the browser's among the shipped ones (docs/SPEC.md,
"Languages"); elsewhere in English, as every staff page."""

import json

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.template.loader import render_to_string
from django.utils import translation
from django.utils.translation import gettext_lazy as _

API_PREFIX = "/api/"

TITLES = {
    400: _("This request cannot be used"),
    403: _("No access"),
    404: _("Not found"),
    409: _("Conflict"),
    413: _("Too large"),
    429: _("Too many requests"),
    500: _("Something went wrong"),
    503: _("Temporarily unavailable"),
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
    with translation.override(_language_of(request)):
        if is_api_request(request) or _wants_json(request):
            body = {"detail": str(detail)}
            if field:
                body["field"] = field
            response = HttpResponse(
                json.dumps(body), status=status, content_type="application/json"
            )
        else:
            html = render_to_string(
                "core/error.html",
                {
                    "title": TITLES.get(status, _("Error")),
                    "detail": detail,
                    "retry_after": retry_after,
                },
            )
            response = HttpResponse(html, status=status)
        if is_participant_request(request):
            response["Content-Language"] = translation.get_language()
    if retry_after is not None:
        response["Retry-After"] = str(retry_after)
    return response


def is_participant_request(request: HttpRequest) -> bool:
    return request.path.startswith(tuple(settings.PARTICIPANT_PATH_PREFIXES))


def _language_of(request: HttpRequest) -> str:
    """The language of an error answer: English outside the participants' addresses; on
    theirs the language their pages use, once known, else the browser's."""
    if not is_participant_request(request):
        return settings.LANGUAGE_CODE
    chosen = getattr(request, "_participant_language", None)
    return chosen or translation.get_language_from_request(request)


def _wants_json(request: HttpRequest) -> bool:
    accept = request.headers.get("Accept", "")
    return "application/json" in accept and "text/html" not in accept
