"""The worker pages and the worker JSON API answer in the participant's language
(docs/SPEC.md, "Languages"); every other page (staff, admin, API for staff) stays in
English, whatever the browser asks for.

The language is chosen at entry (``annotation.services.languages``) and kept in the
worker's session; a page requested before that (a study link that is not valid, the
waiting page) follows the browser's ``Accept-Language`` among the shipped languages
until the entry view narrows it to the batch's.
"""

from django.http import HttpRequest, HttpResponse
from django.utils import translation
from django.utils.cache import patch_vary_headers

from annotation import worker_session
from annotation.services.languages import match, parse_accept_language, shipped

# the URL names of the worker's pages and API calls (annotation/worker_urls.py)
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
    """Activates the participant's language for the worker's views only.

    It decides in ``process_view``, from the URL Django has just resolved
    (``request.resolver_match``), rather than resolving the path a second time: the
    worker's API calls are the busiest requests the platform serves."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        before = translation.get_language()
        response = self.get_response(request)
        if getattr(request, "_participant_language", None) is None:
            return response
        # the view may have settled another language (the entry page)
        response.headers.setdefault("Content-Language", translation.get_language())
        patch_vary_headers(response, ("Accept-Language",))
        if before is None:
            translation.deactivate()
        else:
            translation.activate(before)  # what translation.override would restore
        return response

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs):
        found = request.resolver_match
        if found is None or found.url_name not in WORKER_URL_NAMES:
            return None
        language = worker_session.language_for_batch(
            request.session, view_kwargs.get("slug")
        ) or browser_language(request.headers.get("Accept-Language", ""))
        request._participant_language = language
        translation.activate(language)
        return None
