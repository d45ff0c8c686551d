"""Whether the job queue's broker answers (``/healthz``, ``/readyz``)."""

from celery import current_app
from redis import Redis
from redis.exceptions import RedisError

PING_TIMEOUT_S = 1.0

IN_PROCESS = "in-process"

_clients: dict[str, Redis] = {}


def broker_status() -> str:
    """``"ok"``, ``"in-process"`` (no broker: jobs run in the web process) or
    ``"unavailable: <reason>"``."""
    conf = current_app.conf
    url = str(conf.broker_url or "")
    if conf.task_always_eager or not url.startswith(("redis://", "rediss://")):
        return IN_PROCESS
    client = _clients.get(url)
    if client is None:
        client = Redis.from_url(
            url, socket_connect_timeout=PING_TIMEOUT_S, socket_timeout=PING_TIMEOUT_S
        )
        _clients[url] = client
    try:
        client.ping()
    except (RedisError, OSError) as error:
        return f"unavailable: {type(error).__name__}"
    return "ok"
