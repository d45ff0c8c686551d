"""The worker pages and the worker JSON API answer in the participant's language
(docs/SPEC.md, "Languages"); every other page (staff, admin, API for staff) stays in
English, whatever the browser asks for.

The language is chosen at entry (``annotation.services.languages``) and kept in the
worker's session; a page requested before that (a study link that is not valid, the
waiting page) follows the browser's ``Accept-Language`` among the shipped languages
until the entry view narrows it to the batch's.
"""

from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from django.utils import translation
from django.utils.cache import patch_vary_headers

from annotation import worker_session
from annotation.services.languages import match, parse_accept_language, shipped

# the URL names of the worker's pages and API calls (annotation/urls.py, api/urls.py)
WORKER_URL_NAMES = frozenset(
    {
        "work-entry",
        "work-consent",
        "work-questionnaire",
        "work-switch",
        "work-task",
        "api-work-next",
        "api-assignment-label",
        "api-assignment-heartbeat",
    }
)


def browser_language(accept_language: str) -> str:
    """The shipped language a browser asks for first, else English."""
    codes = shipped()
    for tag in parse_accept_language(accept_language):
        found = match(tag, codes)
        if found:
            return found
    return codes[0]


class ParticipantLanguageMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        try:
            found = resolve(request.path_info)
        except Resolver404:
            found = None
        if found is None or found.url_name not in WORKER_URL_NAMES:
            return self.get_response(request)
        language = worker_session.language_for_batch(
            request.session, found.kwargs.get("slug")
        ) or browser_language(request.headers.get("Accept-Language", ""))
        with translation.override(language):
            response = self.get_response(request)
            # the view may have settled another language (the entry page)
            response.headers.setdefault("Content-Language", translation.get_language())
        patch_vary_headers(response, ("Accept-Language",))
        return response
