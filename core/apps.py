from django.apps import AppConfig
from django.db.models.signals import post_migrate


class CoreConfig(AppConfig):
    name = "core"
    verbose_name = "Platform"

    def ready(self) -> None:
        from django.contrib import admin

        from core import checks  # noqa: F401  (registers the system checks)
        from core.logins import backends  # noqa: F401  (counts failed logins)
        from core.logins.forms import ThrottledAdminAuthenticationForm
        from core.roles import ensure_roles

        post_migrate.connect(ensure_roles, dispatch_uid="core.ensure_roles")
        admin.site.login_form = ThrottledAdminAuthenticationForm
