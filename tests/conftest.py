"""Suite-wide test settings."""

import pytest


@pytest.fixture(autouse=True)
def fast_password_hashing(settings):
    # PBKDF2's deliberate slowness costs ~0.5 s per user; tests need no brute-force guard.
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def private_job_files(settings, tmp_path):
    # Job files (exports, reports, stored uploads) go to a folder of each test's own.
    settings.DATA_DIR = tmp_path / "data"


@pytest.fixture(autouse=True)
def redis_answering():
    # A test that made Redis fail opens this process's breaker (core.redis_outage); the
    # next test starts with Redis assumed to answer.
    from core import redis_outage

    redis_outage.reset()
    yield
    redis_outage.reset()
