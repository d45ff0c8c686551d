"""What the corpora app adds to the staff site (``core.extensions``) beyond its study type's
pages (``diversity.corpora.study``): the section of a batch's data card that says how the
batch was selected from a corpus."""

from core.extensions import CardSection, register_card_section


def register_extensions() -> None:
    from diversity.corpora.services.batches import selection_card_lines

    register_card_section("batch", CardSection("corpus-selection", selection_card_lines))
