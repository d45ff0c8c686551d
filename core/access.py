"""Staff access, asked the same way by every page and API endpoint.

An app defines its checks as functions of the user (``can_export(user) -> bool``, built
on ``core.roles.has_permission``); pages use ``staff_page(check)`` and DRF views
``permission_class(check)`` with the same function, so a page and its API never
disagree about who may do what.
"""

from collections.abc import Callable
from functools import wraps

from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from rest_framework.permissions import BasePermission

Check = Callable[[object], bool]

FORBIDDEN_TEMPLATE = "core/forbidden.html"


def holds(permission: str) -> Check:
    """The check that a logged-in staff user holds ``"app_label.codename"``
    (``core.roles.has_permission``), named after it for the DRF permission built on it."""
    from core.roles import has_permission

    def check(user) -> bool:
        return has_permission(user, permission)

    check.__name__ = check.__qualname__ = "holds_" + permission.replace(".", "_")
    return check


def staff_page(check: Check):
    """Login required (→ the login page), then ``check(user)`` or a 403 page."""

    def decorate(view):
        @wraps(view)
        def guarded(request: HttpRequest, *args, **kwargs) -> HttpResponse:
            if not check(request.user):
                return render(request, FORBIDDEN_TEMPLATE, status=403)
            return view(request, *args, **kwargs)

        return login_required(guarded)

    return decorate


def permission_class(check: Check, *, read_check: Check | None = None) -> type[BasePermission]:
    """A DRF permission asking ``check``; with ``read_check``, safe methods ask that instead."""

    class RolePermission(BasePermission):
        def has_permission(self, request, view):
            if read_check is not None and request.method in ("GET", "HEAD", "OPTIONS"):
                return read_check(request.user)
            return check(request.user)

    RolePermission.__name__ = f"Requires_{getattr(check, '__name__', 'check')}"
    return RolePermission


def has_staff_role(user) -> bool:
    """A logged-in staff user who holds a role (``core.roles``), or a superuser: who may
    read the API's schema and its documentation page (a login without a role may not)."""
    if not getattr(user, "is_authenticated", False):
        return False
    if user.is_superuser:
        return True
    from core.roles import ROLES

    return user.is_staff and user.groups.filter(name__in=ROLES).exists()


# The API schema and docs (``SPECTACULAR_SETTINGS["SERVE_PERMISSIONS"]``)
HasStaffRole = permission_class(has_staff_role)
