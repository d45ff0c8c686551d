from django.apps import AppConfig


class CrowdConfig(AppConfig):
    name = "crowd"
    verbose_name = "Crowd platforms"

    # granted to the staff roles by core.roles (admins hold researchers' too)
    researcher_permissions = (
        "crowd.view_platformsubmission",
        "crowd.view_reviewdecision",
    )
    admin_permissions = (
        "crowd.act_on_platforms",
        "crowd.view_bonusrun",
        "crowd.view_platformcall",
    )

    def ready(self) -> None:
        from crowd import pages, signals

        pages.register_extensions()
        signals.connect()
