"""Celery app. Broker = REDIS_URL when set; otherwise tasks execute in-process (eager)."""

import os

from celery import Celery
from celery.signals import celeryd_init

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@celeryd_init.connect
def _worker_waits_longer(conf=None, **_):
    """The web's Redis timeouts are short so that no request waits on a hung Redis; the
    worker has no request to answer, and a short socket timeout would only make it
    reconnect more often."""
    options = dict(conf.broker_transport_options or {})
    options.update(socket_connect_timeout=2, socket_timeout=10)
    options.pop("max_retries", None)  # the worker reconnects for as long as it takes
    conf.broker_transport_options = options
    conf.broker_connection_timeout = 4
