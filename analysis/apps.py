from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    verbose_name = "Analysis"
    # checked by core's system check: each needs a registered runner
    job_kinds = ("analysis",)

    def ready(self) -> None:
        from analysis import access, pages
        from analysis.services import analyses  # noqa: F401  (registers the "analysis" job kind)

        access.grant_permissions()
        pages.register_extensions()
