"""What the census app adds to the staff site (``core.extensions``): a "Census" entry in
the main navigation, for those who may see censuses."""

from core.extensions import NavLink, register_nav
from diversity.census.access import can_view_census


def register_extensions() -> None:
    register_nav(NavLink("Census", "manage-census-list", can_view_census, order=60))
