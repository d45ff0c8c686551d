"""System checks of the platform layer (``manage.py check``, run before every command)."""

from django.apps import apps
from django.core import checks

from core.jobs.kinds import registered_kinds


@checks.register()
def job_kinds_have_runners(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    """Every job kind an app declares (``AppConfig.job_kinds``) has a registered runner."""
    errors = []
    known = set(registered_kinds())
    for config in apps.get_app_configs():
        for kind in getattr(config, "job_kinds", ()):
            if kind not in known:
                errors.append(
                    checks.Error(
                        f"job kind {kind!r} declared by app {config.label!r} has no runner",
                        hint="Register one with core.jobs.kinds.register_job_kind in a "
                        "module the app imports from AppConfig.ready().",
                        obj=config,
                        id="core.E001",
                    )
                )
    return errors
