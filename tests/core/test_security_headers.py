"""CSP, no-store and HSTS on the answers (README "Deployment")."""

import pytest
from django.test import Client

from tests.factories import make_batch
from tests.staff import staff_client

pytestmark = pytest.mark.django_db


@pytest.fixture
def researcher():
    return staff_client("researcher", "res")


def test_pages_and_exports_carry_csp_and_no_store(researcher):
    batch = make_batch(n_items=1)
    for path in (
        "/manage/",
        f"/manage/{batch.slug}/",
        f"/api/v1/batches/{batch.slug}/export?layout=long&format=csv",
        f"/work/{batch.slug}/?worker=w",
        "/accounts/login/",
    ):
        response = researcher.get(path)
        assert response.status_code == 200, path
        policy = response["Content-Security-Policy"]
        assert "script-src 'self'" in policy and "'unsafe-inline'" not in policy, path
        assert "frame-ancestors 'none'" in policy
        assert "no-store" in response["Cache-Control"], path


def test_hsts_when_debug_is_off(settings):
    # the production default (DEBUG=0); SecurityMiddleware sends it on HTTPS requests only
    settings.SECURE_HSTS_SECONDS = 31_536_000
    response = Client().get("/healthz", secure=True)
    assert response["Strict-Transport-Security"] == "max-age=31536000; includeSubDomains"
    assert "Strict-Transport-Security" not in Client().get("/healthz")


def test_hsts_defaults(monkeypatch):
    import importlib

    import config.settings as project_settings

    monkeypatch.setenv("DEBUG", "0")
    monkeypatch.setenv("SECRET_KEY", "x" * 60)
    try:
        production = importlib.reload(project_settings)
        assert production.SECURE_HSTS_SECONDS == 365 * 24 * 3600
        assert production.SECURE_HSTS_INCLUDE_SUBDOMAINS is True
        monkeypatch.setenv("HSTS_SECONDS", "0")
        assert importlib.reload(project_settings).SECURE_HSTS_SECONDS == 0
    finally:
        monkeypatch.undo()
        importlib.reload(project_settings)
