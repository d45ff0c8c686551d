"""Logins are throttled per account and per address, with a clear message."""

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()


def login(client, username, password, path="/accounts/login/"):
    return client.post(path, {"username": username, "password": password})


def test_sixty_wrong_passwords_then_the_right_one_is_refused():
    User.objects.create_user("alice", password="right-password", is_staff=True)
    client = Client(REMOTE_ADDR="203.0.113.5")
    statuses = [login(client, "alice", f"wrong-{n}").status_code for n in range(60)]
    assert statuses[:5] == [200] * 5  # the form again: wrong password
    assert set(statuses[5:]) == {429}
    response = login(client, "alice", "right-password")
    assert response.status_code == 429
    assert "Too many failed logins for this account" in response.content.decode()
    assert "_auth_user_id" not in client.session
    # from another address too: the account is locked, not just this address
    other = Client(REMOTE_ADDR="198.51.100.7")
    assert login(other, "alice", "right-password").status_code == 429
    # and in Django's admin
    admin = login(other, "alice", "right-password", path="/admin/login/")
    assert "Too many failed logins" in admin.content.decode()


def test_one_address_trying_many_accounts_is_locked(settings):
    settings.LOGIN_FAILURES_PER_ADDRESS = 8
    User.objects.create_user("bob", password="bobs-password", is_staff=True)
    client = Client(REMOTE_ADDR="203.0.113.9")
    for n in range(8):
        login(client, f"someone-{n}", "guess")
    response = login(client, "bob", "bobs-password")
    assert response.status_code == 429
    assert "your network address" in response.content.decode()
    # another address is not affected
    assert login(Client(REMOTE_ADDR="203.0.113.10"), "bob", "bobs-password").status_code == 302


def test_behind_the_proxy_the_client_address_comes_from_its_header(settings):
    settings.CLIENT_IP_HEADER = "HTTP_X_REAL_IP"
    settings.LOGIN_FAILURES_PER_ADDRESS = 3
    User.objects.create_user("carol", password="carols-password", is_staff=True)
    proxy = "10.0.0.2"  # every request arrives from the proxy
    for n in range(3):
        login(Client(REMOTE_ADDR=proxy, HTTP_X_REAL_IP="203.0.113.20"), f"x{n}", "guess")
    locked = Client(REMOTE_ADDR=proxy, HTTP_X_REAL_IP="203.0.113.20")
    assert login(locked, "carol", "carols-password").status_code == 429
    free = Client(REMOTE_ADDR=proxy, HTTP_X_REAL_IP="203.0.113.21")
    assert login(free, "carol", "carols-password").status_code == 302


def test_a_successful_login_clears_the_account_counter():
    User.objects.create_user("dave", password="daves-password", is_staff=True)
    client = Client(REMOTE_ADDR="203.0.113.30")
    for _ in range(4):
        login(client, "dave", "wrong")
    assert login(client, "dave", "daves-password").status_code == 302
    client.logout()
    for _ in range(4):
        login(client, "dave", "wrong")
    assert login(client, "dave", "daves-password").status_code == 302
