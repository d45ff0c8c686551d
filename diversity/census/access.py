"""Who may use the census pages, API and jobs: researchers (and so admins)."""

from core.access import permission_class
from core.roles import RESEARCHER_GROUP, grant, has_permission

RESEARCHER_PERMISSIONS = [
    "census.view_census",
    "census.add_census",
    "census.analyse_census",
]


def grant_permissions() -> None:
    grant(RESEARCHER_GROUP, *RESEARCHER_PERMISSIONS)


def can_view_census(user) -> bool:
    return has_permission(user, "census.view_census")


def can_import_census(user) -> bool:
    return has_permission(user, "census.add_census")


def can_analyse_census(user) -> bool:
    return has_permission(user, "census.analyse_census")


CanImportCensus = permission_class(can_import_census, read_check=can_view_census)
