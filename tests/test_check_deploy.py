"""``manage.py check --deploy`` is clean under the documented production settings."""

import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# The README's production environment (docker-compose.yml sets the same).
PRODUCTION = {
    "DEBUG": "0",
    "SECRET_KEY": "k3Jx9-production-like-secret-key-for-the-check-only-7fQpZ2mW8vR",
    "ALLOWED_HOSTS": "rate.example.org",
    "CSRF_TRUSTED_ORIGINS": "https://rate.example.org",
    "SECURE_SSL_REDIRECT": "1",
}

# Set by the test run, not by a deployment (DJANGO_ALLOW_ASYNC_UNSAFE: the browser tests'
# conftest, for Playwright), or overridden by PRODUCTION.
NOT_INHERITED = {
    "DEBUG",
    "HSTS_SECONDS",
    "SECURE_SSL_REDIRECT",
    "SECRET_KEY",
    "DJANGO_ALLOW_ASYNC_UNSAFE",
}


@pytest.mark.slow
def test_check_deploy_reports_no_issues():
    environment = {key: value for key, value in os.environ.items() if key not in NOT_INHERITED}
    environment.update(PRODUCTION)
    security = _check(environment, "--deploy", "--tag", "security", "--fail-level", "WARNING")
    assert security.returncode == 0, security.stdout + security.stderr
    assert "System check identified no issues" in security.stdout, security.stdout
    everything = _check(environment, "--deploy")  # and no error from any other check
    assert everything.returncode == 0, everything.stdout + everything.stderr


def _check(environment: dict, *arguments: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "manage.py", "check", *arguments],
        cwd=REPO,
        env=environment,
        capture_output=True,
        text=True,
        timeout=120,
    )
