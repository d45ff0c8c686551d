"""Settings, all from environment variables with safe defaults for the embedded run.

| variable        | default                                   |
|-----------------|-------------------------------------------|
| DEBUG           | "1" outside production ("0" to turn off)   |
| SECRET_KEY      | a development key, only when DEBUG is on  |
| DATABASE_URL    | sqlite file data/db.sqlite3 in the repo   |
| REDIS_URL       | unset: Celery tasks run in-process        |
| ALLOWED_HOSTS   | localhost,127.0.0.1 (comma separated)     |
"""

import os
from pathlib import Path

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

from config.database import database_settings, env_flag

BASE_DIR = Path(__file__).resolve().parent.parent
DATA_DIR = Path(os.environ.get("DATA_DIR", BASE_DIR / "data"))


DEBUG = env_flag("DEBUG", True)

SECRET_KEY = os.environ.get("SECRET_KEY", "")
if not SECRET_KEY:
    if not DEBUG:
        raise ImproperlyConfigured("SECRET_KEY must be set when DEBUG is off.")
    SECRET_KEY = "dev-only-insecure-key-change-me"  # noqa: S105 - development default only

ALLOWED_HOSTS = [
    host.strip()
    for host in os.environ.get("ALLOWED_HOSTS", "localhost,127.0.0.1,[::1],testserver").split(",")
    if host.strip()
]
CSRF_TRUSTED_ORIGINS = [
    origin.strip()
    for origin in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",")
    if origin.strip()
]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "rest_framework",
    "rest_framework.authtoken",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "core",
    "annotation",
    "analysis",
    "crowd",
    "diversity.census",
    "diversity.genie",
    "diversity.corpora",
    "diversity.lengths",
    "demo",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    # core.http: security headers on every answer, then the request guard (size caps, JSON
    # depth, control characters) before anything reads the body; errors last (docs/API.md)
    "core.http.headers.SecurityHeadersMiddleware",
    "core.http.limits.RequestLimitsMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    # the worker pages and the worker API in the participant's language (staff: English);
    # before CSRF, so that a refusal there is worded in it too
    "annotation.participant_language.ParticipantLanguageMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "core.http.errors.ErrorResponseMiddleware",
]

# The task kinds this deployment offers (docs/KINDS.md), in the order the "New batch" form
# lists them: the one place a kind is registered.
TASK_KINDS = [
    "annotation.kinds.absolute.AbsoluteKind",
    "annotation.kinds.pairwise.PairwiseKind",
    "annotation.kinds.short_text.ShortTextKind",
    "annotation.kinds.similarity.SimilarityKind",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "core.context_processors.staff",
            ],
        },
    },
]


DATABASES = {"default": database_settings(DATA_DIR, DEBUG)}
# Behind a pooler in transaction mode (PgBouncer's pool_mode = transaction) a server
# connection passes from client to client between transactions, so nothing may outlive
# one: Django's server-side cursors are turned off, the hot statements are not prepared
# unless asked (DATABASE_PREPARED_STATEMENTS; PgBouncer 1.21 and later can carry them
# with max_prepared_statements), and what does outlive a transaction — the exports'
# cursors, the migrations' lock — goes through DATABASE_DIRECT_URL: PostgreSQL itself.
DATABASE_TRANSACTION_POOLING = env_flag("DATABASE_TRANSACTION_POOLING", False)
# The crowdworker's hot statements run prepared on PostgreSQL (annotation.services.sql).
DATABASE_PREPARED_STATEMENTS = env_flag(
    "DATABASE_PREPARED_STATEMENTS", not DATABASE_TRANSACTION_POOLING
)
# the connection for what outlives a transaction (the exports' cursors, the migrations'
# advisory lock): PostgreSQL itself, never a transaction pooler
DIRECT_DATABASE = "default"
if DATABASE_TRANSACTION_POOLING:
    if DATABASES["default"]["ENGINE"] not in ("django.db.backends.postgresql", "core.postgresql"):
        raise ImproperlyConfigured("DATABASE_TRANSACTION_POOLING=1 needs a PostgreSQL DATABASE_URL")
    DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
    direct_url = os.environ.get("DATABASE_DIRECT_URL", "").strip()
    if not direct_url:
        raise ImproperlyConfigured(
            "DATABASE_TRANSACTION_POOLING=1 needs DATABASE_DIRECT_URL, a connection to "
            "PostgreSQL that bypasses the pooler, for the exports' cursors and the migrations' "
            "lock (README, Deployment)"
        )
    DATABASES["direct"] = dj_database_url.parse(direct_url, conn_max_age=0)
    DIRECT_DATABASE = "direct"
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

# Logins are throttled per account and per client address (core.logins).
AUTHENTICATION_BACKENDS = ["core.logins.backends.ThrottledModelBackend"]

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
]

LANGUAGE_CODE = "en"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True
# The participants' languages (docs/SPEC.md, "Languages"): the worker pages, their scripts
# and the worker API speak each of these (catalogues in locale/); staff pages stay English.
LANGUAGES = [
    ("en", "English"),
    ("es", "Español"),
    ("de", "Deutsch"),
    ("fr", "Français"),
    ("pt-br", "Português (Brasil)"),
    ("zh-hans", "简体中文"),
    ("ja", "日本語"),
    ("ko", "한국어"),
    ("hi", "हिन्दी"),
    ("ar", "العربية"),
]
LOCALE_PATHS = [BASE_DIR / "locale"]
# The addresses participants reach (their pages and API calls): an error answered there
# before their language is known (a malformed link, an unknown address) follows the
# browser's Accept-Language among LANGUAGES (core.http.responses)
PARTICIPANT_PATH_PREFIXES = ("/work/", "/api/v1/work/", "/api/v1/assignments/")

STATIC_URL = "/static/"
STATIC_ROOT = Path(os.environ.get("STATIC_ROOT", BASE_DIR / "staticfiles"))
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {
        "BACKEND": (
            "django.contrib.staticfiles.storage.StaticFilesStorage"
            if DEBUG
            else "whitenoise.storage.CompressedManifestStaticFilesStorage"
        )
    },
}
MEDIA_ROOT = DATA_DIR / "media"

LOGIN_URL = "/accounts/login/"
LOGIN_REDIRECT_URL = "/manage/"
LOGOUT_REDIRECT_URL = "/accounts/login/"

# Production hardening: on when DEBUG is off, each can be overridden.
SESSION_COOKIE_SECURE = env_flag("SESSION_COOKIE_SECURE", not DEBUG)
CSRF_COOKIE_SECURE = env_flag("CSRF_COOKIE_SECURE", not DEBUG)
SECURE_SSL_REDIRECT = env_flag("SECURE_SSL_REDIRECT", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_CONTENT_TYPE_NOSNIFF = True
X_FRAME_OPTIONS = "DENY"
# Crowdworkers keep one session for a whole study; two weeks is Django's default.
SESSION_COOKIE_AGE = int(os.environ.get("SESSION_COOKIE_AGE", str(14 * 24 * 3600)))
# HSTS: browsers use HTTPS only, for a year, once they saw the header over HTTPS.
SECURE_HSTS_SECONDS = int(os.environ.get("HSTS_SECONDS", "0" if DEBUG else str(365 * 24 * 3600)))
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_flag("HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD = env_flag("HSTS_PRELOAD", False)
# Container and proxy health checks ask over plain HTTP from inside.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$"]
SILENCED_SYSTEM_CHECKS = []
if not SECURE_HSTS_PRELOAD:
    # Preloading is a separate, hard-to-undo decision (hstspreload.org); HSTS_PRELOAD=1.
    SILENCED_SYSTEM_CHECKS.append("security.W021")

# --- Limits (README, "Deployment"): what one request, upload or process may take.
# Bodies other than uploads (JSON, forms): Django refuses more; the guard answers 413.
DATA_UPLOAD_MAX_MEMORY_SIZE = int(os.environ.get("REQUEST_MAX_BYTES", str(2_621_440)))
# Multipart uploads (item and score files), checked from Content-Length before reading.
UPLOAD_MAX_BYTES = int(os.environ.get("UPLOAD_MAX_BYTES", str(20 * 1024 * 1024)))
# Deepest nesting of arrays/objects a JSON body may have (the label API needs 1).
JSON_MAX_DEPTH = int(os.environ.get("JSON_MAX_DEPTH", "32"))
# Largest items file the synchronous upload (POST /api/v1/batches/<slug>/items) takes: an
# import of about 50,000 items; a larger one would run into gunicorn's timeout
# (GUNICORN_TIMEOUT) and is refused with 413, pointing at the import job, which takes
# files up to UPLOAD_MAX_BYTES.
SYNC_IMPORT_MAX_BYTES = int(os.environ.get("SYNC_IMPORT_MAX_BYTES", str(5 * 1024 * 1024)))
# Longest text (query, response, reference) an import accepts, in characters: a 5,000-word
# answer is about 30,000; longer is almost always a broken file, and every such text is
# rendered on a crowdworker's page.
TEXT_MAX_CHARS = int(os.environ.get("TEXT_MAX_CHARS", "200000"))
# Most responses one batch made from a corpus selection may take (counted before any text
# is read; a larger selection is refused): each becomes an item on crowdworkers' pages.
SELECTION_MAX_ITEMS = int(os.environ.get("SELECTION_MAX_ITEMS", "20000"))
# Memory each process may spend on rendered Markdown (annotation.rendering).
MARKDOWN_CACHE_BYTES = int(os.environ.get("MARKDOWN_CACHE_BYTES", str(8 * 1024 * 1024)))
# Memory each process may spend on items' worker payloads (annotation.selectors).
ITEM_PAYLOAD_CACHE_BYTES = int(os.environ.get("ITEM_PAYLOAD_CACHE_BYTES", str(16 * 1024 * 1024)))
# Login throttling: failures allowed per account and per client address in the window.
LOGIN_FAILURES_PER_ACCOUNT = int(os.environ.get("LOGIN_FAILURES_PER_ACCOUNT", "5"))
LOGIN_FAILURES_PER_ADDRESS = int(os.environ.get("LOGIN_FAILURES_PER_ADDRESS", "20"))
LOGIN_LOCKOUT_SECONDS = int(os.environ.get("LOGIN_LOCKOUT_SECONDS", "900"))
# The request header that holds the client's address when a proxy is in front (the
# compose file's nginx sets X-Real-IP); empty: the connection's address (REMOTE_ADDR).
CLIENT_IP_HEADER = os.environ.get("CLIENT_IP_HEADER", "").strip()
# A job not picked up by a worker within this time failed (lost in a broker outage);
# one running that has reported no progress for JOB_RUNNING_TIMEOUT_SECONDS lost its worker.
JOB_PENDING_TIMEOUT_SECONDS = int(os.environ.get("JOB_PENDING_TIMEOUT_SECONDS", "900"))
JOB_RUNNING_TIMEOUT_SECONDS = int(os.environ.get("JOB_RUNNING_TIMEOUT_SECONDS", str(6 * 3600)))
# A job running in a Celery worker says it is alive every JOB_HEARTBEAT_SECONDS; one that
# has not for JOB_HEARTBEAT_TIMEOUT_SECONDS lost its worker (process or machine) and fails.
JOB_HEARTBEAT_SECONDS = float(os.environ.get("JOB_HEARTBEAT_SECONDS", "10"))
JOB_HEARTBEAT_TIMEOUT_SECONDS = int(os.environ.get("JOB_HEARTBEAT_TIMEOUT_SECONDS", "60"))
# A job in parts keeps at most this many of its messages in the queue (each finished part
# queues the next), so jobs queued after it wait behind this many parts, not behind all
# of a large corpus's; at least the number of worker processes, or some stand idle.
JOB_CHUNK_MESSAGES = int(os.environ.get("JOB_CHUNK_MESSAGES", "16"))
# Job files (prepared exports, reports, stored uploads) older than this many days are
# deleted by the periodic task, except the newest result of each kind per subject
# (core.jobs.retention); 0 keeps them for ever.
JOB_FILES_RETENTION_DAYS = int(os.environ.get("JOB_FILES_RETENTION_DAYS", "30"))

# The analysis job draws the report's figure files (every chart as SVG and PDF, seconds on
# a large batch) once it has the report, so "Download figures" only sends them. Off: they
# are drawn on the first download instead (the report page shows that progress), which
# spares jobs whose figures nobody downloads.
ANALYSIS_FIGURES_IN_JOB = env_flag("ANALYSIS_FIGURES_IN_JOB", True)
# The local embedding model in this process (a worker's embeddings chunks, embed_corpus):
# ONNX Runtime threads (0: its own choice, one per core; with several worker processes on
# one machine, cores / processes), texts per model call, and the device ("auto": a GPU when
# onnxruntime-gpu finds one, else the CPU; "cpu"; "cuda": a GPU or an error).
EMBEDDING_THREADS = int(os.environ.get("EMBEDDING_THREADS", "0"))
EMBEDDING_BATCH_SIZE = int(os.environ.get("EMBEDDING_BATCH_SIZE", "16"))
EMBEDDING_DEVICE = os.environ.get("EMBEDDING_DEVICE", "auto").strip().lower()
# The Celery queue of the embeddings' chunks (empty: the default queue): set it to give them
# to dedicated workers, e.g. a GPU worker started with `celery -A config worker -Q embeddings`.
EMBEDDING_QUEUE = os.environ.get("EMBEDDING_QUEUE", "").strip()
# Responses per part of a corpus analysis (diversity.corpora.services.analysis_parts);
# 0: about 32 parts, each of 1,000 to 20,000 responses.
CORPUS_ANALYSIS_PART_RESPONSES = int(os.environ.get("CORPUS_ANALYSIS_PART_RESPONSES", "0"))

# Scripts, styles, fonts and images from this site only; no inline script (core.http).
# MTurk's HIT is finished by a form posted to MTurk itself.
CONTENT_SECURITY_POLICY = os.environ.get(
    "CONTENT_SECURITY_POLICY",
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; "
    "frame-ancestors 'none'; "
    "form-action 'self' https://www.mturk.com https://workersandbox.mturk.com",
)

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAdminUser"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "DEFAULT_RENDERER_CLASSES": ["rest_framework.renderers.JSONRenderer"],
    # JSON with a nesting limit (JSON_MAX_DEPTH), then DRF's form and multipart parsers
    "DEFAULT_PARSER_CLASSES": [
        "core.api.parsers.JSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "EXCEPTION_HANDLER": "core.api.errors.exception_handler",
}
SPECTACULAR_SETTINGS = {
    "TITLE": "Dense judgments API",
    "DESCRIPTION": "Crowdworker flow, batch management, exports and analysis.",
    "VERSION": "1",
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # no deep links: Swagger UI puts each operation's link inside its toggle button
    # (axe: nested-interactive); the page is for reading and trying the API
    "SWAGGER_UI_SETTINGS": {"deepLinking": False},
    "SERVE_INCLUDE_SCHEMA": False,
    # staff with a role only: a login without a role reads no part of the API
    "SERVE_PERMISSIONS": ["core.access.HasStaffRole"],
    # "state" names two choice sets: a batch's and a job's.
    "ENUM_NAME_OVERRIDES": {
        "BatchStateEnum": "annotation.models.BatchState",
        "JobStateEnum": "core.models.Job.State",
    },
    # One tag per resource, in the order a study uses them; every operation names one.
    "TAGS": [
        {"name": "batches", "description": "Create batches, change settings and state, progress."},
        {"name": "items", "description": "Upload a batch's items (all or nothing)."},
        {"name": "annotators", "description": "Annotators' statistics; exclude and include."},
        {"name": "exports", "description": "The labels: long, dense, annotators, data card."},
        {"name": "scores", "description": "Import model scores; their coverage of a batch."},
        {"name": "analyses", "description": "Run the analysis of ANALYSIS.md; its report."},
        {"name": "jobs", "description": "Background jobs: state, progress, file."},
        {"name": "history", "description": "A batch's audit trail."},
        {"name": "worker", "description": "The crowdworker's page's own calls (session)."},
        {
            "name": "crowd",
            "description": "Prolific and MTurk: sync, review, bonuses, places, fair pay.",
        },
        {
            "name": "corpora",
            "description": "Response pools: import, embeddings, homogeneity analyses, batches.",
        },
    ],
}

# New study entries allowed per client address per hour (0 = no limit): one client
# cannot mint many "independent" annotators (SPEC.md, "Integrity"). 30 in production
# leaves room for a lab or a household behind one address; the embedded run (DEBUG on,
# bin/run) has none, since every demo worker comes from 127.0.0.1.
ENTRY_RATE_LIMIT_PER_HOUR = int(os.environ.get("ENTRY_RATE_LIMIT_PER_HOUR", "0" if DEBUG else "30"))

# Redis on the request path (cache, sessions, rate limits, job queue): a hung Redis
# accepts connections and never answers, so every call is bounded by these timeouts, and
# the first that fails makes this process skip Redis for REDIS_RETRY_SECONDS
# (core.redis_outage): the cache then reads as empty, sessions come from the database,
# rate limits count nothing (fail open) and jobs are refused with 503 at once.
REDIS_CONNECT_TIMEOUT_SECONDS = float(os.environ.get("REDIS_CONNECT_TIMEOUT_SECONDS", "0.3"))
REDIS_SOCKET_TIMEOUT_SECONDS = float(os.environ.get("REDIS_SOCKET_TIMEOUT_SECONDS", "0.5"))
REDIS_RETRY_SECONDS = float(os.environ.get("REDIS_RETRY_SECONDS", "5"))

# Celery: with REDIS_URL the tasks go to a worker; without it they run in-process.
REDIS_URL = os.environ.get("REDIS_URL", "").strip()
CELERY_BROKER_URL = REDIS_URL or "memory://"
CELERY_RESULT_BACKEND = REDIS_URL or None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
# Jobs and their chunks are long tasks: a worker process reserves one message at a time, so
# the next chunk of a job goes to whichever worker is free instead of waiting behind this
# one. The chunk task (core.jobs.chunks) is imported by every worker.
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_IMPORTS = ["core.jobs.chunks"]
# The queue tasks go to when they name none (several platforms on one Redis each need
# their own; the worker listens with -Q).
CELERY_TASK_DEFAULT_QUEUE = os.environ.get("CELERY_DEFAULT_QUEUE", "").strip() or "celery"
# A request that queues a job must not hang while Redis is down or hung: the Redis
# timeouts above, and one immediate reconnect (a Redis restart closed the pooled
# connection); then core.jobs.queue fails the job and answers 503. The Celery worker
# itself waits longer (config/celery.py): it has no request to answer.
CELERY_BROKER_CONNECTION_TIMEOUT = REDIS_CONNECT_TIMEOUT_SECONDS
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "socket_connect_timeout": REDIS_CONNECT_TIMEOUT_SECONDS,
    "socket_timeout": REDIS_SOCKET_TIMEOUT_SECONDS,
    # how often a web process tries to (re)connect before publishing gives up
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0,
    "interval_max": 0,
}
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 1,
    "interval_start": 0,
    "interval_step": 0,
    "interval_max": 0,
}
CELERY_REDIS_SOCKET_CONNECT_TIMEOUT = REDIS_CONNECT_TIMEOUT_SECONDS
CELERY_REDIS_SOCKET_TIMEOUT = REDIS_SOCKET_TIMEOUT_SECONDS
CELERY_RESULT_BACKEND_TRANSPORT_OPTIONS = {"retry_policy": {"timeout": 1.0}}
CELERY_BEAT_SCHEDULE = {
    "expire-stale-leases": {
        "task": "annotation.tasks.expire_stale_leases",
        "schedule": 60.0,
    },
    "record-batch-statistics": {
        "task": "annotation.tasks.record_batch_statistics",
        "schedule": 300.0,
    },
    "fail-stale-jobs": {"task": "core.tasks.fail_stale_jobs", "schedule": 60.0},
    "clear-expired-sessions": {"task": "core.tasks.clear_expired_sessions", "schedule": 3600.0},
    "delete-old-job-files": {"task": "core.tasks.delete_old_job_files", "schedule": 3600.0},
}

# Crowd platforms (crowd app, README "Prolific and MTurk"). Prolific: an API token from
# Prolific's settings, its API address, and the workspace's webhook secret (POST
# /api/v1/hooks/secrets/). With a token, a beat task syncs every batch that has a
# prolific_study_id each minute and pauses/resumes the study with the batch;
# PROLIFIC_AUTO_PLACES also keeps the study's places in step with what the batch needs.
PROLIFIC_API_TOKEN = os.environ.get("PROLIFIC_API_TOKEN", "").strip()
PROLIFIC_API_URL = os.environ.get("PROLIFIC_API_URL", "https://api.prolific.com").strip()
PROLIFIC_WEBHOOK_SECRET = os.environ.get("PROLIFIC_WEBHOOK_SECRET", "").strip()
PROLIFIC_TIMEOUT_SECONDS = float(os.environ.get("PROLIFIC_TIMEOUT_SECONDS", "10"))
PROLIFIC_AUTO_PLACES = env_flag("PROLIFIC_AUTO_PLACES", False)
CROWD_PLACES_MARGIN = float(os.environ.get("CROWD_PLACES_MARGIN", "0.1"))
# MTurk: credentials from the standard AWS variables (AWS_ACCESS_KEY_ID,
# AWS_SECRET_ACCESS_KEY, or a profile); the sandbox unless MTURK_SANDBOX=0.
MTURK_SANDBOX = env_flag("MTURK_SANDBOX", True)
MTURK_ENDPOINT_URL = os.environ.get("MTURK_ENDPOINT_URL", "").strip()
CELERY_BEAT_SCHEDULE["sync-crowd-platforms"] = {
    "task": "crowd.tasks.sync_crowd_platforms",
    "schedule": 60.0,
}

# The cache (login throttling, chart images) is shared by every web process: Redis when
# REDIS_URL is set — a Redis outage or hang then reads as an empty cache, never as an
# error or a wait (core.cache) — and this process's memory otherwise.
CACHES = {
    "default": (
        {
            "BACKEND": "core.cache.ResilientRedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": "dj",
            "OPTIONS": {
                "socket_connect_timeout": REDIS_CONNECT_TIMEOUT_SECONDS,
                "socket_timeout": REDIS_SOCKET_TIMEOUT_SECONDS,
            },
        }
        if REDIS_URL
        else {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}
    )
}
# Sessions (a crowdworker's says which annotator the browser stands for, and is read by
# every API call): with Redis they are read from the cache and written through to the
# database, so the hot path reads no session row and every web node sees the same
# sessions (a Redis outage falls back to the database). Without Redis, the database
# alone: per-process caches could hand one process a stale copy of a session another
# process changed.
SESSION_ENGINE = "core.session_engines.cached_db" if REDIS_URL else "core.session_engines.db"

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "INFO")},
    "loggers": {
        # matplotlib's PDF writer subsets each font through fontTools, which tells every
        # step at INFO: about 1,200 lines in a worker's log for one analysis's figures
        "fontTools": {"level": "WARNING"},
    },
}
