"""``absolute``: (query, response) → a rating 1 (very poor) … 5 (excellent)."""

from django.utils.translation import gettext_lazy as _

from annotation.kinds.base import ChoiceKind, ExportColumn, ResponseSlot, Scale


class AbsoluteKind(ChoiceKind):
    name = "absolute"
    label = "Absolute rating (1–5)"
    response_slots = (ResponseSlot("response", "response_id", "response", "model"),)
    scale = Scale(
        (
            (1, _("Very poor")),
            (2, _("Poor")),
            (3, _("Acceptable")),
            (4, _("Good")),
            (5, _("Excellent")),
        )
    )
    question = _("How good is this response?")
    item_template = "annotation/kinds/absolute.html"
    item_columns = (
        ExportColumn("response_id", "string", "the rated response's id", "response__response_id"),
        ExportColumn("model", "string", "the model that wrote it", "response__model"),
        ExportColumn("response", "string", "the response's text", "response__text"),
    )
    analyses = ("ratings", "corpus_typicality")
