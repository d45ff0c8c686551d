from django.apps import AppConfig


class CrowdConfig(AppConfig):
    name = "crowd"
    verbose_name = "Crowd platforms"

    def ready(self) -> None:
        from crowd import access, pages, signals

        access.grant_permissions()
        pages.register_extensions()
        signals.connect()
