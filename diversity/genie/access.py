"""Who may use the Genie pages, API and jobs: researchers (and so admins)."""

from core.access import permission_class
from core.roles import RESEARCHER_GROUP, grant, has_permission

RESEARCHER_PERMISSIONS = [
    "genie.view_genieset",
    "genie.add_genieset",
    "genie.analyse_genie",
]


def grant_permissions() -> None:
    grant(RESEARCHER_GROUP, *RESEARCHER_PERMISSIONS)


def can_view_genie(user) -> bool:
    return has_permission(user, "genie.view_genieset")


def can_import_genie(user) -> bool:
    return has_permission(user, "genie.add_genieset")


def can_analyse_genie(user) -> bool:
    return has_permission(user, "genie.analyse_genie")


CanImportGenie = permission_class(can_import_genie, read_check=can_view_genie)
CanAnalyseGenie = permission_class(can_analyse_genie, read_check=can_view_genie)
