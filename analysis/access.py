"""Who may analyse: the analysis app's permissions, granted to researchers (and so admins)."""

from core.access import permission_class
from core.roles import RESEARCHER_GROUP, grant, has_permission

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


def can_analyse(user) -> bool:
    return has_permission(user, "analysis.analyse_batch")


CanAnalyse = permission_class(can_analyse)
