"""What the Genie app adds to the staff site (``core.extensions``): a "Genie" entry in the
main navigation, for those who may see Genie sets."""

from core.extensions import NavLink, register_nav
from diversity.genie.access import can_view_genie


def register_extensions() -> None:
    register_nav(NavLink("Genie", "manage-genie-list", can_view_genie, order=65))
