"""Staff users and logged-in clients for the tests (one definition for every test file)."""

from itertools import count

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from rest_framework.authtoken.models import Token

_numbers = count(1)
PASSWORD = "pw-123456"


def staff_user(role: str | None, name: str | None = None):
    """A user in the ``admin`` or ``researcher`` group (``None``: a login without a role)."""
    user = get_user_model().objects.create_user(
        name or f"{role or 'nobody'}-{next(_numbers)}", password=PASSWORD, is_staff=bool(role)
    )
    if role:
        user.groups.add(Group.objects.get(name=role))
    return user


def logged_in(user) -> Client:
    """A browser session logged in as ``user``."""
    client = Client()
    client.force_login(user)
    return client


def with_token(user) -> Client:
    """An API client authenticating with ``user``'s token."""
    key = Token.objects.get_or_create(user=user)[0].key
    return Client(HTTP_AUTHORIZATION=f"Token {key}")


def staff_client(role: str | None, name: str | None = None) -> Client:
    """A browser session logged in as a new user of ``role``."""
    return logged_in(staff_user(role, name))


def token_client(role: str | None, name: str | None = None) -> Client:
    """An API client authenticating with a new ``role`` user's token."""
    return with_token(staff_user(role, name))
