"""``/favicon.ico``: the site's icon where browsers look for it without being told.

Pages name ``static/favicon.svg`` (and this ICO) in their ``<head>``; browsers and other
clients that ask for ``/favicon.ico`` on their own get the same icon here instead of a 404.
"""

from django.contrib.staticfiles import finders
from django.http import FileResponse, Http404, HttpRequest
from django.views.decorators.http import require_GET

ICON = "favicon.ico"
ONE_DAY = 24 * 3600


@require_GET
def favicon(request: HttpRequest) -> FileResponse:
    path = finders.find(ICON)
    if path is None:
        raise Http404("The icon is missing from the static files.")
    response = FileResponse(open(path, "rb"), content_type="image/vnd.microsoft.icon")
    response["Cache-Control"] = f"public, max-age={ONE_DAY}"
    return response
