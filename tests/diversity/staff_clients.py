"""Logged-in test clients for the census and Genie pages and APIs, one per role."""

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group
from django.test import Client
from rest_framework.authtoken.models import Token


def staff_user(role: str | None, username: str | None = None):
    """A user in the ``researcher`` or ``admin`` group (``None``: a login with no role)."""
    user = get_user_model().objects.create_user(username or f"user-{role}", password="pw-123456")
    if role:
        user.groups.add(Group.objects.get(name=role))
    return user


def page_client(role: str | None) -> Client:
    client = Client()
    client.force_login(staff_user(role))
    return client


def token_client(role: str | None, username: str | None = None) -> Client:
    user = staff_user(role, username)
    return Client(HTTP_AUTHORIZATION=f"Token {Token.objects.create(user=user).key}")
