"""Unhandled errors answer JSON on the API (500, or 503 with Retry-After when the
database is down), a short page elsewhere; never Django's HTML traceback page."""

import pytest
from django.contrib.auth.models import Group, User
from django.db import OperationalError
from django.test import Client
from rest_framework.authtoken.models import Token

from tests.factories import make_batch

pytestmark = pytest.mark.django_db


@pytest.fixture
def api():
    user = User.objects.create_user("r", password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name="admin"))
    return Client(
        HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}",
        raise_request_exception=False,
    )


def _progress_failing_with(api, monkeypatch, error):
    """A batch's progress asked of the API while the code behind it raises ``error``."""
    batch = make_batch(n_items=1)

    def broken(*args, **kwargs):
        raise error

    monkeypatch.setattr("annotation.api.staff.selectors.batch_dashboard", broken)
    return api.get(f"/api/v1/batches/{batch.slug}/progress")


def test_a_bug_on_the_api_is_500_json(api, monkeypatch):
    response = _progress_failing_with(api, monkeypatch, RuntimeError("boom"))
    assert response.status_code == 500
    assert response["Content-Type"] == "application/json"
    assert response.json() == {
        "detail": "The server failed to answer this request; the error has been logged."
    }


def test_a_database_outage_on_the_api_is_503_with_retry_after(api, monkeypatch):
    outage = OperationalError("server closed the connection unexpectedly")
    response = _progress_failing_with(api, monkeypatch, outage)
    assert response.status_code == 503
    assert response["Retry-After"] == "5"
    assert "database is not answering" in response.json()["detail"]


def test_a_database_outage_on_a_page_is_a_503_page(monkeypatch):
    user = User.objects.create_user("a", password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name="admin"))
    client = Client(raise_request_exception=False)
    client.force_login(user)

    def broken(*args, **kwargs):
        raise OperationalError("the database system is shutting down")

    monkeypatch.setattr("annotation.views.staff_pages._batches_with_totals", broken)
    response = client.get("/manage/")
    assert response.status_code == 503 and response["Retry-After"] == "5"
    assert "Temporarily unavailable" in response.content.decode()


def test_unknown_api_paths_and_bad_hosts_answer_json():
    response = Client().get("/api/v1/no/such/thing")
    assert response.status_code == 404
    assert response.json() == {"detail": "There is nothing at this address."}
    response = Client(HTTP_HOST="evil.example").get("/api/v1/batches/")
    assert response.status_code == 400
    assert response.json() == {"detail": "The request could not be read."}


def test_the_500_handler_maps_a_database_outage_to_503(rf):
    from core.http.errors import server_error

    request = rf.get("/manage/")
    try:
        raise OperationalError("connection refused")
    except OperationalError:
        response = server_error(request)
    assert response.status_code == 503
    assert server_error(rf.get("/api/v1/x")).status_code == 500
