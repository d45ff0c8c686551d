"""Who may see and do what with the crowd platforms.

* researcher (and admin) — read the Review tab and the fair-pay figures;
* admin — apply reviews, pay bonuses, change places, create HITs (``crowd.act_on_platforms``).
"""

from core.access import holds

can_view_review = holds("crowd.view_platformsubmission")
can_act = holds("crowd.act_on_platforms")
