"""Who may analyse: the analysis app's permissions, granted to researchers (and so admins)."""

from core.access import holds, permission_class
from core.roles import RESEARCHER_GROUP, grant

RESEARCHER_PERMISSIONS = [
    "analysis.analyse_batch",
    "analysis.view_scoresource",
    "analysis.add_scoresource",
    "analysis.change_scoresource",
    "analysis.view_score",
    "analysis.add_score",
]


def grant_permissions() -> None:
    grant(RESEARCHER_GROUP, *RESEARCHER_PERMISSIONS)


can_analyse = holds("analysis.analyse_batch")


CanAnalyse = permission_class(can_analyse)
