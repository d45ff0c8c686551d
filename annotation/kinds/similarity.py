"""``similarity``: (a question, a reference answer, a candidate answer) → how similar the
candidate is to the reference, 1 (not similar at all) … 4 (essentially the same).

The human side of a Genie set: keys that link a judgment back to it (``prompt_id``,
``question_id``, ``feature``, ``document_id``, ``population_id``, …) are not part of the
format, so the import keeps them in the item's metadata, as for every kind.
"""

from django.utils.translation import gettext_lazy as _

from annotation.kinds.base import ChoiceKind, ContentText, ExportColumn, Scale


class SimilarityKind(ChoiceKind):
    name = "similarity"
    label = "Answer similarity (1–4)"
    content_texts = (
        ContentText("reference", "the reference answer"),
        ContentText("candidate", "the candidate answer, compared with the reference"),
    )
    scale = Scale(
        (
            (1, _("Not similar at all")),
            (2, _("Somewhat similar")),
            (3, _("Very similar")),
            (4, _("Essentially the same")),
        )
    )
    question = _("How similar is the candidate answer to the reference answer?")
    item_template = "annotation/kinds/similarity.html"
    item_columns = (
        ExportColumn("reference", "string", "the reference answer's text", "content.reference"),
        ExportColumn("candidate", "string", "the candidate answer's text", "content.candidate"),
    )
    analyses = ("genie",)
