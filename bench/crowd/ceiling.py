"""The no-database ceiling: the cheapest Django answer to the same two requests.

Served with the same gunicorn command as the platform (``gunicorn bench.crowd.ceiling``,
same workers, same environment except an unreachable ``DATABASE_URL``). It includes
everything in the project's ``MIDDLEWARE`` (security, WhiteNoise, sessions and
authentication, both lazy and never touched here, common, CSRF, which *is* enforced on
the POSTs, messages, clickjacking), URL routing, parsing the JSON body and serialising
a JSON answer of the same shape and size as the platform's. It leaves out Django REST
framework, the session load, every SQL statement, template and Markdown rendering.

* ``GET  /ceiling/entry``                 sets the ``csrftoken`` cookie (like the entry page);
* ``POST /ceiling/next``                  a fixed item, shaped like ``/api/v1/work/<slug>/next``;
* ``POST /ceiling/assignments/<id>/label`` validates ``value`` and answers 201.
"""

import json
import os
import uuid
from datetime import UTC, datetime, timedelta

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.crowd.ceiling_settings")

from django.core.wsgi import get_wsgi_application  # noqa: E402
from django.http import HttpRequest, JsonResponse  # noqa: E402
from django.urls import path  # noqa: E402
from django.views.decorators.csrf import ensure_csrf_cookie  # noqa: E402
from django.views.decorators.http import require_GET, require_POST  # noqa: E402

QUERY = "Explain, in a few paragraphs, why the sky is blue and sunsets are red."
RESPONSE = (
    "The sky looks blue because air molecules scatter short wavelengths of sunlight "
    "much more strongly than long ones (Rayleigh scattering). " * 8
)
ITEM = {
    "item_id": "ceiling-item",
    "query": QUERY,
    "query_html": f"<p>{QUERY}</p>\n",
    "response": RESPONSE,
    "response_html": f"<p>{RESPONSE}</p>\n",
    "html": (
        f'<div class="item"><section class="query"><p>{QUERY}</p></section>'
        f'<section class="response"><p>{RESPONSE}</p></section></div>'
    ),
}


@require_GET
@ensure_csrf_cookie
def entry(request: HttpRequest) -> JsonResponse:
    return JsonResponse({"ok": True})


@require_POST
def next_item(request: HttpRequest) -> JsonResponse:
    json.loads(request.body or b"{}")
    expires = datetime.now(UTC) + timedelta(seconds=600)
    return JsonResponse(
        {
            "assignment": str(uuid.uuid4()),
            "expires_at": expires.isoformat(),
            "item": ITEM,
            "progress": {"done": 0, "quota": None, "total_items": 1},
        }
    )


@require_POST
def label(request: HttpRequest, assignment_id: str) -> JsonResponse:
    try:
        body = json.loads(request.body)
        value = int(body["value"])
        uuid.UUID(assignment_id)
    except (ValueError, KeyError, TypeError):
        return JsonResponse({"detail": "value: malformed"}, status=400)
    if value not in (1, 2, 3, 4, 5):
        return JsonResponse({"detail": "value: out of range"}, status=400)
    return JsonResponse({"status": "counted"}, status=201)


urlpatterns = [
    path("ceiling/entry", entry),
    path("ceiling/next", next_item),
    path("ceiling/assignments/<str:assignment_id>/label", label),
]

application = get_wsgi_application()
