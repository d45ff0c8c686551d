"""Django's model backend behind the login throttle (``core.logins.throttle``)."""

from django.contrib.auth import get_user_model
from django.contrib.auth.backends import ModelBackend
from django.contrib.auth.signals import user_logged_in, user_login_failed
from django.core.exceptions import PermissionDenied
from django.dispatch import receiver

from core.logins import throttle


class ThrottledModelBackend(ModelBackend):
    """Refuses a locked account or address before the password is even compared."""

    def authenticate(self, request, username=None, password=None, **kwargs):
        if username is None:
            username = kwargs.get(get_user_model().USERNAME_FIELD)
        if throttle.lockout_message(request, username):
            raise PermissionDenied("login throttled")  # authenticate() then returns None
        return super().authenticate(request, username, password, **kwargs)


@receiver(user_login_failed, dispatch_uid="core.logins.count_failure")
def _count_failure(sender, credentials, request=None, **kwargs):
    throttle.record_failure(request, credentials.get("username"))


@receiver(user_logged_in, dispatch_uid="core.logins.clear_account")
def _clear_account(sender, request, user, **kwargs):
    throttle.record_success(user.get_username())
