from django.apps import AppConfig

ANALYSIS_RESEARCHER_PERMISSIONS = [
    "analysis.view_scoresource",
    "analysis.add_scoresource",
    "analysis.change_scoresource",
    "analysis.view_score",
    "analysis.add_score",
]


class AnalysisConfig(AppConfig):
    name = "analysis"
    verbose_name = "Analysis"

    def ready(self) -> None:
        # registers the "analysis" job runner in every process (web, worker, commands)
        from analysis.services import analyses  # noqa: F401
        from annotation import roles

        # researchers (and so admins) import scores; ensure_roles grants these after migrate
        roles.EXTRA_RESEARCHER_PERMISSIONS += [
            permission
            for permission in ANALYSIS_RESEARCHER_PERMISSIONS
            if permission not in roles.EXTRA_RESEARCHER_PERMISSIONS
        ]
