"""The platform's WSGI application with one extra path that sleeps, served by the
timeout test's own gunicorn (``test_request_timeout``) so that a request outlasts
``GUNICORN_TIMEOUT`` on purpose. Never imported by the application itself."""

import time

from config.wsgi import application as platform

SLEEP_PATHS = ("/api/v1/_sleep", "/_sleep")


def application(environ, start_response):
    if environ.get("PATH_INFO") in SLEEP_PATHS:
        time.sleep(3600)  # the arbiter aborts the worker first
    return platform(environ, start_response)
