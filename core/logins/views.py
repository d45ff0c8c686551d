"""The staff login page: Django's, with the throttled form and ``429`` when locked."""

from django.contrib.auth.views import LoginView

from core.logins.forms import THROTTLED, ThrottledAuthenticationForm


class ThrottledLoginView(LoginView):
    authentication_form = ThrottledAuthenticationForm

    def form_invalid(self, form):
        response = super().form_invalid(form)
        if any(error.code == THROTTLED for error in form.non_field_errors().as_data()):
            response.status_code = 429
        return response
