"""Least privilege: anonymous clients and crowdworkers reach only the worker flow."""

import pytest
from django.test import Client

from tests.factories import make_batch

pytestmark = pytest.mark.django_db

STAFF_ONLY_GET = ["/admin/", "/admin/annotation/label/", "/api/schema/", "/api/docs/"]


def crowdworker(batch):
    client = Client()
    assert client.get(f"/work/{batch.slug}/", {"worker": "w1"}).status_code == 200
    return client


@pytest.mark.parametrize("path", STAFF_ONLY_GET)
def test_anonymous_and_crowdworker_are_kept_out_of_staff_pages(path):
    batch = make_batch()
    for client in (Client(), crowdworker(batch)):
        response = client.get(path)
        if path.startswith("/admin/"):
            assert response.status_code == 302
            assert response["Location"].startswith("/admin/login/")
        else:
            assert response.status_code in (401, 403)


def test_worker_session_of_one_batch_cannot_rate_in_another():
    mine, theirs = make_batch(), make_batch()
    client = crowdworker(mine)
    assert client.get(f"/work/{theirs.slug}/task").status_code == 403


def test_every_model_is_in_djangos_admin():
    from django.apps import apps
    from django.contrib import admin

    ours = [
        m
        for m in apps.get_models()
        if m._meta.app_label in ("core", "annotation", "analysis") and m._meta.managed
    ]
    missing = [m.__name__ for m in ours if not admin.site.is_registered(m)]
    assert not missing


@pytest.mark.parametrize("path", ["/api/schema/", "/api/docs/"])
def test_a_staff_login_without_a_role_cannot_read_the_api_schema_or_docs(path):
    from tests.staff import staff_client

    nobody = staff_client(None)
    nobody_staff = staff_client(None)
    user = nobody_staff.session.get("_auth_user_id")
    from django.contrib.auth import get_user_model

    get_user_model().objects.filter(pk=user).update(is_staff=True)
    for client in (nobody, nobody_staff):
        assert client.get(path).status_code in (302, 403)
    assert staff_client("researcher").get(path).status_code == 200
