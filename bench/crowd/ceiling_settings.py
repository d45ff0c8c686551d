"""Settings of the ceiling server: the platform's settings with the ceiling's URLconf.

The middleware stack, ``DEBUG``, ``SECRET_KEY``, ``ALLOWED_HOSTS``, cookies and CSRF are
the platform's; only ``ROOT_URLCONF`` differs. The runner points ``DATABASE_URL`` at a
port where no database listens, so any database access would fail loudly as a 500.
"""

from bench.crowd.platform_settings import *  # noqa: F403

ROOT_URLCONF = "bench.crowd.ceiling"
