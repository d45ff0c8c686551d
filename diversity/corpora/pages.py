"""What the corpora app adds to the staff site (``core.extensions``): a "Corpora" entry in
the main navigation, for those who may see corpora, and the section of a batch's data card
that says how the batch was selected from a corpus."""

from core.extensions import CardSection, NavLink, register_card_section, register_nav
from diversity.corpora.access import can_view_corpora


def register_extensions() -> None:
    from diversity.corpora.services.batches import selection_card_lines

    register_nav(NavLink("Corpora", "manage-corpora-list", can_view_corpora, order=70))
    register_card_section("batch", CardSection("corpus-selection", selection_card_lines))
