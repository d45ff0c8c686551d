"""gunicorn's sync worker, answering its own errors as JSON under ``/api/``.

gunicorn answers some requests itself, with an HTML page: a request it cannot parse, and
a request whose worker ran out of time (``GUNICORN_TIMEOUT``: the worker is aborted in the
middle of the request and answers 500 before it exits). An API client expects JSON
(``{"detail": ...}``, docs/API.md), so for a path under ``/api/`` this worker writes the
same status as JSON. nginx answers over-long request lines and headers itself
(``deploy/nginx/nginx.conf``), before gunicorn sees them.
"""

import json

from gunicorn import util
from gunicorn.workers.sync import SyncWorker

DETAILS = {
    500: (
        "The server could not finish this request in time (GUNICORN_TIMEOUT) or failed "
        "while answering it. Large imports and exports run as jobs (…/import-jobs, "
        "…/export-jobs); otherwise try again."
    ),
}


def write_json_error(sock, status_int: int, reason: str, mesg: str) -> None:
    """``gunicorn.util.write_error`` with a JSON body."""
    detail = DETAILS.get(status_int) or f"{reason}. {mesg}".strip()
    body = json.dumps({"detail": detail}).encode()
    head = (
        f"HTTP/1.1 {status_int} {reason}\r\nConnection: close\r\n"
        f"Content-Type: application/json\r\nCache-Control: no-store\r\n"
        f"Content-Length: {len(body)}\r\n\r\n"
    ).encode("latin-1")
    util.write_nonblock(sock, head + body)


class JsonErrorsSyncWorker(SyncWorker):
    def handle_error(self, req, client, addr, exc):
        path = getattr(req, "path", None) or ""
        if not path.startswith("/api/"):
            return super().handle_error(req, client, addr, exc)
        html_writer = util.write_error
        util.write_error = write_json_error  # a sync worker serves one request at a time
        try:
            return super().handle_error(req, client, addr, exc)
        finally:
            util.write_error = html_writer
