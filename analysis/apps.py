from django.apps import AppConfig


class AnalysisConfig(AppConfig):
    name = "analysis"
    verbose_name = "Analysis"
    # checked by core's system check: each needs a registered runner
    job_kinds = ("analysis",)

    # granted to the staff roles by core.roles (admins hold researchers' too)
    researcher_permissions = (
        "analysis.analyse_batch",
        "analysis.view_scoresource",
        "analysis.add_scoresource",
        "analysis.change_scoresource",
        "analysis.view_score",
        "analysis.add_score",
    )

    def ready(self) -> None:
        from analysis import pages
        from analysis.services import analyses  # noqa: F401  (registers the "analysis" job kind)

        pages.register_extensions()
