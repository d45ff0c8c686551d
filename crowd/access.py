"""Who may see and do what with the crowd platforms.

* researcher (and admin) — read the Review tab and the fair-pay figures;
* admin — apply reviews, pay bonuses, change places, create HITs (``crowd.act_on_platforms``).
"""

from core.access import holds
from core.roles import ADMIN_GROUP, RESEARCHER_GROUP, grant

RESEARCHER_PERMISSIONS = ["crowd.view_platformsubmission", "crowd.view_reviewdecision"]
ADMIN_PERMISSIONS = ["crowd.act_on_platforms", "crowd.view_bonusrun", "crowd.view_platformcall"]


def grant_permissions() -> None:
    grant(RESEARCHER_GROUP, *RESEARCHER_PERMISSIONS)
    grant(ADMIN_GROUP, *ADMIN_PERMISSIONS)


can_view_review = holds("crowd.view_platformsubmission")
can_act = holds("crowd.act_on_platforms")
