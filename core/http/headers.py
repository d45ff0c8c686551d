"""Headers every dynamic response carries.

* ``Content-Security-Policy`` (``settings.CONTENT_SECURITY_POLICY``): scripts, styles,
  fonts and images from this site only, no inline script, no plug-ins, no framing; the
  pages keep their data in ``<script type="application/json">`` blocks, which a policy
  does not execute. Responses that set their own policy keep it.
* ``Cache-Control: no-store`` unless the view chose a caching policy: staff pages,
  exports, worker pages and API answers are per-person and must not stay in a shared
  cache or the browser's disk cache. Static files are served before this (WhiteNoise,
  or the proxy) with their own long-lived caching.
"""

from functools import wraps

from django.conf import settings
from django.http import HttpRequest, HttpResponse


class SecurityHeadersMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy
        if "Cache-Control" not in response:
            response["Cache-Control"] = "no-store"
        return response


def allow_inline_styles(view):
    """The site's policy plus ``'unsafe-inline'`` styles, for one view that cannot do
    without them (Swagger UI at ``/api/docs/`` sets styles from its script; staff only).
    Inline script stays refused."""

    @wraps(view)
    def relaxed(request: HttpRequest, *args, **kwargs) -> HttpResponse:
        response = view(request, *args, **kwargs)
        policy = settings.CONTENT_SECURITY_POLICY
        if policy:
            response["Content-Security-Policy"] = policy.replace(
                "style-src 'self'", "style-src 'self' 'unsafe-inline'"
            )
        return response

    return relaxed
