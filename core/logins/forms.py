"""Login forms that say "too many failed logins" instead of "wrong password"."""

from django.contrib.admin.forms import AdminAuthenticationForm
from django.contrib.auth.forms import AuthenticationForm
from django.core.exceptions import ValidationError

from core.logins import throttle

THROTTLED = "throttled"


class _ThrottleCheck:
    def clean(self):
        message = throttle.lockout_message(self.request, self.cleaned_data.get("username"))
        if message:
            raise ValidationError(message, code=THROTTLED)
        return super().clean()


class ThrottledAuthenticationForm(_ThrottleCheck, AuthenticationForm):
    """The staff login page's form (``/accounts/login/``)."""


class ThrottledAdminAuthenticationForm(_ThrottleCheck, AdminAuthenticationForm):
    """The Django admin's login form (``/admin/login/``)."""
