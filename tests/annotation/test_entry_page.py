"""The study link's page when the entry services refuse it, and the client address the
entry records and rate-limits by (behind the proxy: ``CLIENT_IP_HEADER``)."""

import pytest
from django.core.cache import cache
from django.test import Client

from annotation.models import Annotator, Participation
from tests.factories import make_batch

pytestmark = pytest.mark.django_db


def template_names(response) -> list[str]:
    return [template.name for template in response.templates]


@pytest.fixture
def without_request_guard(settings):
    """The request guard refuses control characters before any view; without it the
    entry services' own checks (``join_batch``) are what stands between the link and
    the database."""
    assert "core.http.limits.RequestLimitsMiddleware" in settings.MIDDLEWARE
    settings.MIDDLEWARE = [
        name for name in settings.MIDDLEWARE if name != "core.http.limits.RequestLimitsMiddleware"
    ]


def test_an_entry_parameter_join_batch_refuses_gets_the_studys_own_400_page(
    without_request_guard,
):
    batch = make_batch(n_items=1)
    response = Client().get(
        f"/work/{batch.slug}/", {"PROLIFIC_PID": "p1", "STUDY_ID": "s\x00t", "SESSION_ID": "x"}
    )
    assert response.status_code == 400
    # the view's answer (the study's title, what is wrong), not the generic error page
    assert template_names(response)[0] == "annotation/unavailable.html"
    assert "core/error.html" not in template_names(response)
    html = response.content.decode()
    assert batch.title in html
    assert "The link is not valid: STUDY_ID: contains the control character U+0000" in html
    assert not Participation.objects.exists()


def test_a_worker_id_the_service_refuses_gets_the_studys_own_400_page():
    batch = make_batch(n_items=1)
    response = Client().get(f"/work/{batch.slug}/", {"worker": "w" * 201})
    assert response.status_code == 400
    assert template_names(response)[0] == "annotation/unavailable.html"
    assert "The link is not valid: platform_id: is longer than 200 characters" in (
        response.content.decode()
    )
    assert not Annotator.objects.exists()


# ------------------------------------------------------------------ behind the proxy

PROXY = "10.0.0.2"  # every request reaches the app from nginx's address


def enter_through_proxy(batch, worker: str, client_ip: str | None):
    headers = {"HTTP_X_REAL_IP": client_ip} if client_ip is not None else {}
    return Client(REMOTE_ADDR=PROXY, **headers).get(f"/work/{batch.slug}/", {"worker": worker})


def test_behind_the_proxy_entries_are_limited_per_client_not_per_proxy(settings):
    settings.CLIENT_IP_HEADER = "HTTP_X_REAL_IP"
    settings.ENTRY_RATE_LIMIT_PER_HOUR = 2
    cache.clear()
    batch = make_batch(n_items=20, per_item=20)
    first = [enter_through_proxy(batch, f"a{i}", "203.0.113.9").status_code for i in range(3)]
    assert first == [200, 200, 429]
    # another client behind the same proxy has its own count
    assert enter_through_proxy(batch, "b0", "203.0.113.10").status_code == 200
    addresses = dict(
        Participation.objects.filter(batch=batch).values_list("annotator__platform_id", "entry_ip")
    )
    assert addresses == {"a0": "203.0.113.9", "a1": "203.0.113.9", "b0": "203.0.113.10"}


def test_a_header_that_is_no_address_falls_back_to_the_connection(settings):
    # nginx always sets X-Real-IP to an address; anything else (a request that did not
    # come through it) is not trusted, and never reaches the inet column as text
    settings.CLIENT_IP_HEADER = "HTTP_X_REAL_IP"
    settings.ENTRY_RATE_LIMIT_PER_HOUR = 100
    cache.clear()
    batch = make_batch(n_items=5, per_item=5)
    for worker, header in (("x1", "not-an-address"), ("x2", "1.2.3.4:5678"), ("x3", "")):
        assert enter_through_proxy(batch, worker, header).status_code == 200, worker
    assert set(Participation.objects.values_list("entry_ip", flat=True)) == {PROXY}
    assert enter_through_proxy(batch, "x4", " 2001:db8::1 , 10.0.0.1").status_code == 200
    assert Participation.objects.get(annotator__platform_id="x4").entry_ip == "2001:db8::1"
