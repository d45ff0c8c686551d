"""gunicorn's own answers (a worker out of time, a request it cannot parse) are JSON
under ``/api/`` (config/gunicorn_worker.py), HTML elsewhere."""

import json
import logging
import socket

import pytest
from gunicorn.config import Config
from gunicorn.http.message import Request
from gunicorn.http.unreader import IterUnreader

from config.gunicorn_worker import JsonErrorsSyncWorker


class _Log:
    def __getattr__(self, name):
        return lambda *args, **kwargs: None


def _answer(path: str, error: BaseException) -> tuple[str, bytes]:
    config = Config()
    worker = object.__new__(JsonErrorsSyncWorker)  # no arbiter: only handle_error is used
    worker.cfg, worker.log = config, _Log()
    raw = f"GET {path} HTTP/1.1\r\nHost: example.org\r\n\r\n".encode()
    request = Request(config, IterUnreader([raw]), ("127.0.0.1", 5000))
    ours, theirs = socket.socketpair()
    with ours, theirs:
        worker.handle_error(request, ours, ("127.0.0.1", 5000), error)
        ours.shutdown(socket.SHUT_WR)
        answer = b"".join(iter(lambda: theirs.recv(65536), b""))
    head, _, body = answer.partition(b"\r\n\r\n")
    return head.decode("latin-1"), body


@pytest.mark.parametrize("error", [SystemExit(1), RuntimeError("boom")])
def test_a_worker_timeout_under_the_api_answers_json(error):
    logging.disable(logging.CRITICAL)
    head, body = _answer("/api/v1/batches/x/items", error)
    logging.disable(logging.NOTSET)
    assert head.startswith("HTTP/1.1 500 ")
    assert "Content-Type: application/json" in head
    assert "GUNICORN_TIMEOUT" in json.loads(body)["detail"]


def test_elsewhere_gunicorn_keeps_its_page():
    head, body = _answer("/manage/", SystemExit(1))
    assert head.startswith("HTTP/1.1 500 ") and "text/html" in head and b"<html>" in body


def test_the_deployed_config_uses_this_worker():
    import runpy
    from pathlib import Path

    conf = runpy.run_path(str(Path(__file__).resolve().parents[1] / "deploy/gunicorn.conf.py"))
    assert conf["worker_class"] == "config.gunicorn_worker.JsonErrorsSyncWorker"
    assert conf["limit_request_line"] == 0
