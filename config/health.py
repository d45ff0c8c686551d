"""Health endpoints for container checks and orchestrators.

* ``/healthz`` — liveness: 200 while the database answers (the web can serve the
  crowdworkers), 503 when it does not; the body names the state of the database and of
  the job queue's broker separately, e.g. ``{"database": "ok", "broker": "unavailable:
  ConnectionError"}``, so a broker outage is visible without failing the web container;
  it never waits on the broker (``core.jobs.broker.last_broker_status``): a hung Redis
  must not make the container look dead;
* ``/readyz`` — readiness: 200 only when both answer (``"in-process"`` counts as
  answering when there is no broker), 503 otherwise.
"""

from django.db import connection
from django.http import JsonResponse

from core.jobs.broker import IN_PROCESS, broker_status, last_broker_status


def _database_status() -> str:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except Exception as error:  # any database failure makes the instance unhealthy
        return f"unavailable: {type(error).__name__}"
    return "ok"


def healthz(request):
    states = {"database": _database_status(), "broker": last_broker_status()}
    status = 200 if states["database"] == "ok" else 503
    return JsonResponse(states, status=status)


def readyz(request):
    states = {"database": _database_status(), "broker": broker_status()}
    ready = states["database"] == "ok" and states["broker"] in ("ok", IN_PROCESS)
    return JsonResponse(states, status=200 if ready else 503)
