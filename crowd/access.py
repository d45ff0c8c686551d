"""Who may see and do what with the crowd platforms.

* researcher (and admin) — read the Review tab and the fair-pay figures;
* admin — apply reviews, pay bonuses, change places, create HITs (``crowd.act_on_platforms``).
"""

from core.roles import ADMIN_GROUP, RESEARCHER_GROUP, grant, has_permission

RESEARCHER_PERMISSIONS = ["crowd.view_platformsubmission", "crowd.view_reviewdecision"]
ADMIN_PERMISSIONS = ["crowd.act_on_platforms", "crowd.view_bonusrun", "crowd.view_platformcall"]


def grant_permissions() -> None:
    grant(RESEARCHER_GROUP, *RESEARCHER_PERMISSIONS)
    grant(ADMIN_GROUP, *ADMIN_PERMISSIONS)


def can_view_review(user) -> bool:
    return has_permission(user, "crowd.view_platformsubmission")


def can_act(user) -> bool:
    return has_permission(user, "crowd.act_on_platforms")
