"""One compose-equivalent stack for every fault test of the session (see ``stack``).

It needs PostgreSQL's server binaries, redis-server, nginx and ``runuser`` on this
machine (``.ci/run`` installs nginx), and runs in the PostgreSQL pass of the suite only
(``DATABASE_URL=postgres://...``): the stack brings its own cluster either way, so one
run is enough.
"""

import sys
from contextlib import contextmanager
from dataclasses import dataclass

import dj_database_url
import pytest
from django.conf import settings
from django.contrib.contenttypes.models import ContentType
from django.db import connections
from django.db.utils import ConnectionHandler

from tests.faults import stack


@dataclass
class Stack:
    postgres: stack.PostgresCluster
    redis: stack.RedisServer
    web: stack.Process
    web_port: int
    proxy: stack.Process
    proxy_port: int
    worker: stack.Process
    environment: dict
    database_url: str

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.proxy_port}"

    def logs(self) -> str:
        """The ends of the web, proxy and worker logs, for failure messages."""
        return "\n".join(
            f"--- {process.log_path.name}\n{process.log_text()[-3000:]}"
            for process in (self.web, self.proxy, self.worker)
        )


@pytest.fixture(scope="session")
def fault_stack(tmp_path_factory):
    if "postgresql" not in settings.DATABASES["default"]["ENGINE"]:
        pytest.skip("fault tests run in the PostgreSQL pass (DATABASE_URL=postgres://...)")
    missing = stack.missing_tools()
    if missing:
        pytest.skip(f"fault tests need {', '.join(missing)} (.ci/run installs nginx)")
    folder = tmp_path_factory.mktemp("fault-stack")
    postgres = stack.PostgresCluster().create()
    redis = stack.RedisServer().start()
    started: list[stack.Process] = []
    try:
        postgres.create_database("app")
        environment = stack.app_environment(
            postgres.url("app"), redis.url, folder / "static", folder / "data"
        )
        stack.manage(environment, "migrate", "--noinput", "-v0")
        stack.manage(environment, "collectstatic", "--noinput", "-v0")
        web, web_port = stack.gunicorn(environment, folder / "gunicorn.log", workers=3)
        started.append(web)
        proxy, proxy_port = stack.nginx(web_port, folder / "static", folder)
        started.append(proxy)
        worker = stack.Process(
            [sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "solo",
             "--loglevel", "WARNING", "--without-heartbeat", "--without-gossip",
             "--without-mingle"],
            environment, folder / "celery.log",
        ).start()  # fmt: skip
        started.append(worker)
        yield Stack(
            postgres, redis, web, web_port, proxy, proxy_port, worker, environment,
            postgres.url("app"),
        )  # fmt: skip
    finally:
        for process in reversed(started):
            process.stop()
        redis.stop()
        postgres.destroy()


@contextmanager
def default_database(url: str):
    """Point this process's ORM at ``url`` (the stack's own database) for a while."""
    handler = ConnectionHandler({"default": dj_database_url.parse(url)})
    saved = connections["default"]
    connections["default"] = handler["default"]
    ContentType.objects.clear_cache()  # ids may differ between the two databases
    try:
        yield
    finally:
        connections["default"].close()
        connections["default"] = saved
        ContentType.objects.clear_cache()


@pytest.fixture
def stack_db(fault_stack, django_db_blocker):
    """The ORM on the stack's database (not the suite's test database) for one test."""
    with django_db_blocker.unblock(), default_database(fault_stack.database_url):
        yield fault_stack
