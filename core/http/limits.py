"""The request guard: refuses oversized bodies, too deeply nested JSON and control
characters in what a client sends, before any view, parser or CSRF check reads it.

* a body larger than ``UPLOAD_MAX_BYTES`` (multipart uploads) or
  ``DATA_UPLOAD_MAX_MEMORY_SIZE`` (everything else) → 413, decided from
  ``Content-Length`` before a byte of the body is read;
* a JSON body nested deeper than ``JSON_MAX_DEPTH`` → 400;
* a control character (NUL, and any C0 control but tab and line breaks in text) in a
  query parameter, a form field or a JSON string → 400 naming the parameter or field.

The answer is JSON ``{"detail", "field"}`` under ``/api/`` and a short page elsewhere
(``core.http.responses``). Services check their own text fields too (``core.text``); this
guard makes sure nothing reaches the database that PostgreSQL would refuse with a 500.
"""

import json

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.text import format_lazy

from core.http.json_body import first_string_with, nests_deeper_than
from core.http.responses import error_response
from core.text import control_character_refusal, first_control_character


class RequestLimitsMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        refusal = (
            self._oversized(request)
            or self._bad_query_string(request)
            or self._bad_form(request)
            or self._bad_json(request)
        )
        return refusal or self.get_response(request)

    # ------------------------------------------------------------------ size

    def _oversized(self, request: HttpRequest) -> HttpResponse | None:
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            return error_response(request, 400, "Content-Length is not a number.")
        if _is_multipart(request):
            limit, setting, what = settings.UPLOAD_MAX_BYTES, "UPLOAD_MAX_BYTES", "an upload"
        else:
            limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
            setting, what = "REQUEST_MAX_BYTES", "a request body"
        if limit is None or length <= limit:
            return None
        return error_response(
            request,
            413,
            f"The request body is {length:,} bytes; this server accepts at most "
            f"{limit:,} bytes ({_megabytes(limit)}) for {what} ({setting}). "
            "Split the file or ask an admin to raise the limit.",
        )

    # ------------------------------------------------------------------ text

    def _bad_query_string(self, request: HttpRequest) -> HttpResponse | None:
        return _bad_fields(request, request.GET, multiline=False)

    def _bad_form(self, request: HttpRequest) -> HttpResponse | None:
        form_types = ("application/x-www-form-urlencoded", "multipart/form-data")
        if request.method != "POST" or _content_type(request) not in form_types:
            return None
        # Text areas (instructions, consent) may hold line breaks and tabs.
        return _bad_fields(request, request.POST, multiline=True)

    def _bad_json(self, request: HttpRequest) -> HttpResponse | None:
        if "json" not in _content_type(request) or not request.META.get("CONTENT_LENGTH"):
            return None
        raw = request.body
        limit = settings.JSON_MAX_DEPTH
        if nests_deeper_than(raw, limit):
            return error_response(
                request,
                400,
                f"body: JSON nested deeper than {limit} levels is not accepted (JSON_MAX_DEPTH).",
                field="body",
            )
        try:
            document = json.loads(raw)
        except (ValueError, RecursionError):
            return None  # malformed: the view's parser answers 400 with its own message
        found = first_string_with(
            document, lambda text: first_control_character(text, multiline=True) is not None
        )
        if found is None:
            return None
        path, text = found
        index = first_control_character(text, multiline=True)
        return _control_character_refusal(request, path, text, index)


def _bad_fields(request: HttpRequest, fields, *, multiline: bool) -> HttpResponse | None:
    for name, values in fields.lists():
        for text in (name, *values):
            index = first_control_character(text, multiline=multiline)
            if index is not None:
                return _control_character_refusal(request, name, text, index)
    return None


def _control_character_refusal(request, field: str, text: str, index: int) -> HttpResponse:
    shown = field.encode("unicode_escape").decode("ascii")  # a NUL in a name stays visible
    detail = format_lazy("{}: {}", shown, control_character_refusal(text, index))
    return error_response(request, 400, detail, field=shown)


def _content_type(request: HttpRequest) -> str:
    return (request.META.get("CONTENT_TYPE") or "").split(";")[0].strip().lower()


def _is_multipart(request: HttpRequest) -> bool:
    return _content_type(request).startswith("multipart/")


def _megabytes(size: int) -> str:
    return f"{size / (1024 * 1024):.1f} MiB"
