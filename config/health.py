"""``/healthz``: 200 when the database answers (used by container healthchecks)."""

from django.db import connection
from django.http import HttpResponse, JsonResponse


def healthz(request):
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as error:  # any database failure makes the instance unhealthy
        return JsonResponse({"database": f"unavailable: {type(error).__name__}"}, status=503)
    return HttpResponse("ok", content_type="text/plain")
