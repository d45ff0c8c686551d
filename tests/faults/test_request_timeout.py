"""A request that outlasts gunicorn's timeout, through nginx: the client gets a clear
answer (JSON under ``/api/``, a short page elsewhere) soon after the timeout, and the
site keeps serving everyone else meanwhile and afterwards.

The test runs its own gunicorn (``GUNICORN_TIMEOUT=5``, the platform's application with
one path that sleeps: ``slow_wsgi``) and nginx with ``deploy/nginx/nginx.conf``, on the
fault stack's database and Redis.
"""

import json
import time

import pytest

from tests.faults import stack

pytestmark = pytest.mark.slow

# long enough for a worker to boot on a busy machine (gunicorn's timeout covers that
# too), short enough for the test
TIMEOUT_S = 5


@pytest.fixture(scope="module")
def short_timeout_site(fault_stack, tmp_path_factory):
    folder = tmp_path_factory.mktemp("timeout-site")
    environment = {**fault_stack.environment, "GUNICORN_TIMEOUT": str(TIMEOUT_S)}
    web, web_port = stack.gunicorn(
        environment, folder / "gunicorn.log", workers=2, app="tests.faults.slow_wsgi"
    )
    try:
        static = folder / "static"
        static.mkdir()
        proxy, proxy_port = stack.nginx(web_port, static, folder)
        try:
            yield proxy_port, web
        finally:
            proxy.stop()
    finally:
        web.stop()


def _timed(port: int, path: str):
    started = time.monotonic()
    status, headers, body = stack.http_get(port, path, timeout=30)
    return status, headers, body, time.monotonic() - started


@pytest.mark.parametrize(
    "path, json_answer", [("/api/v1/_sleep", True), ("/_sleep", False)], ids=["api", "page"]
)
def test_a_request_past_the_timeout_is_answered_and_the_site_stays_up(
    short_timeout_site, path, json_answer
):
    port, web = short_timeout_site
    status, headers, body, seconds = _timed(port, path)
    print(f"\n[timeout] {path}: {status} after {seconds:.1f} s")
    assert status in (500, 502, 504), (status, body[:300])
    assert seconds < TIMEOUT_S + 10
    if json_answer:
        assert headers["Content-Type"].startswith("application/json"), headers
        assert json.loads(body)["detail"]
    else:
        assert headers["Content-Type"].startswith("text/html")
    # the proxy did not give up on the application: the next requests are served (the
    # aborted worker's replacement may still be booting: the other worker answers)
    answers = [stack.http_get(port, "/healthz", timeout=10)[0] for _ in range(5)]
    assert answers == [200] * 5, answers
    assert web.alive()
