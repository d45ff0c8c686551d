"""Real Celery workers for the tests: a ``celery worker`` subprocess on the test database,
and this process's Celery app switched from in-process execution to a broker and back."""

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import redis
from django.conf import settings
from django.db import connection
from kombu import pools as kombu_pools

from config.celery import app as celery_app

REDIS_URL = os.environ.get("TEST_REDIS_URL", "redis://127.0.0.1:6379/14")
REPO = Path(__file__).resolve().parents[1]


def redis_available() -> bool:
    try:
        return bool(redis.Redis.from_url(REDIS_URL, socket_connect_timeout=1).ping())
    except redis.RedisError:
        return False


def worker_database_url() -> str:
    """The test database as a ``DATABASE_URL`` for a worker subprocess."""
    db = connection.settings_dict
    if connection.vendor == "sqlite":
        return f"sqlite:///{db['NAME']}"
    auth = db["USER"] + (f":{db['PASSWORD']}" if db["PASSWORD"] else "")
    return f"postgres://{auth}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}"


def reset_connections() -> None:
    """Forget pooled broker connections so the next send uses the current broker_url."""
    if celery_app._pool is not None:
        celery_app._pool.force_close_all()
        celery_app._pool = None
    celery_app.amqp._producer_pool = None
    kombu_pools.reset()  # kombu's global producer pools would keep the closed connections
    # the result backend is cached per thread once used (e.g. by an eager task earlier)
    celery_app._backend_cache = None
    celery_app._local.__dict__.pop("backend", None)


@contextmanager
def sending_to(**conf):
    """This process's Celery app with ``conf`` (a broker, ``task_always_eager=False``...),
    its former settings put back on exit."""
    saved = {key: celery_app.conf[key] for key in conf}
    celery_app.conf.update(conf)
    reset_connections()
    try:
        yield
    finally:
        celery_app.conf.update(saved)
        reset_connections()


@contextmanager
def celery_worker(log_path: Path, arguments: list[str], environment: dict, stop_seconds: float):
    """A ``celery -A config worker`` subprocess with ``arguments``, on the test database and
    ``environment``, its output in ``log_path``. On exit it is stopped warm (it finishes its
    running task) and killed after ``stop_seconds``, and the end of its log is printed."""
    environment = {
        **os.environ,
        "DATABASE_URL": worker_database_url(),
        "DATA_DIR": str(settings.DATA_DIR),
        **environment,
    }
    log = open(log_path, "w+")
    worker = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "config", "worker", *arguments],
        cwd=REPO,
        env=environment,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        yield worker
    finally:
        worker.terminate()
        try:
            worker.wait(timeout=stop_seconds)
        except subprocess.TimeoutExpired:
            worker.kill()
            worker.wait(timeout=10)
        log.seek(0)
        print(log.read()[-3000:])
        log.close()
