"""gunicorn settings for the compose file's ``web`` service (behind nginx, deploy/nginx).

Sync workers, because nginx buffers every request and answer: a worker only ever talks
to nginx, so a slow client cannot hold one. Each can be overridden by the environment
(``WEB_CONCURRENCY``, ``GUNICORN_TIMEOUT``) or on the command line.
"""

import os

bind = "0.0.0.0:8000"
# Two sync workers per core: a request spends much of its time waiting on PostgreSQL,
# which a second process per core fills (README, "Worker class and count"). 4 is the
# compose file's default, measured on 2 cores.
workers = int(os.environ.get("WEB_CONCURRENCY", "4"))
# A request that runs longer than this is killed with its worker (then respawned); under
# /api/ its 500 is JSON like every other API error (config/gunicorn_worker.py).
timeout = int(os.environ.get("GUNICORN_TIMEOUT", "60"))
worker_class = "config.gunicorn_worker.JsonErrorsSyncWorker"
# nginx bounds the request line and each header (large_client_header_buffers 4 8k) and
# answers longer ones itself, as JSON under /api/; gunicorn then never answers them with
# its own HTML page: no limit of its own on the line (0), its largest on the fields.
limit_request_line = 0
limit_request_field_size = 8190
limit_request_fields = 32768
graceful_timeout = 20
# (No keepalive: a sync worker closes each connection after its answer, whatever it says.)
# Only nginx reaches this port (compose publishes nginx only): trust its forwarding.
forwarded_allow_ips = "*"
# A worker that served this many requests is replaced: a bound on slow memory growth, set
# high because a new worker starts cold (Django imported again, every item's rendered
# payload and the batches' rows read again) and the workers, started together and sharing
# the load, reach it together. At 2,000 the four workers of a busy 2-core machine (60
# requests a second each) were replaced every half minute, and the window that saw it
# carried about half the cycles of the others (bench/compose_web.py). At 50,000 that is
# a quarter of an hour at such a peak; the process's own caches are bounded
# (ITEM_PAYLOAD_CACHE_BYTES), so its memory does not grow with the requests it serves.
max_requests = 50_000
max_requests_jitter = 5_000
accesslog = "-"
