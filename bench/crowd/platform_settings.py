"""The project's settings for the benchmark's servers, with one difference.

``config.settings`` fixes ``STATIC_ROOT`` to ``<repo>/staticfiles``; with ``DEBUG=0`` the
pages need ``collectstatic``'s manifest there. The benchmark collects the static files
into a temporary folder of its own instead (``BENCH_STATIC_ROOT``) so that it writes
nothing outside ``bench/``. Everything else (middleware, sessions, CSRF, database,
``CONN_MAX_AGE``...) is exactly ``config.settings``, read from the same environment.
"""

import os
from pathlib import Path

from config.settings import *  # noqa: F403

if os.environ.get("BENCH_STATIC_ROOT"):
    STATIC_ROOT = Path(os.environ["BENCH_STATIC_ROOT"])
