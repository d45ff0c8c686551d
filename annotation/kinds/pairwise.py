"""``pairwise``: (query, response A, response B) → +2 (A much better) … −2 (B much better).

Labels are stored relative to the imported A and B (SPEC.md).
"""

from annotation.kinds.base import ChoiceKind, ExportColumn, ResponseSlot, Scale


class PairwiseKind(ChoiceKind):
    name = "pairwise"
    label = "Pairwise preference (A/B)"
    response_slots = (
        ResponseSlot("response_a", "response_a_id", "response_a", "model_a"),
        ResponseSlot("response_b", "response_b_id", "response_b", "model_b"),
    )
    scale = Scale(
        (
            (2, "A is much better"),
            (1, "A is slightly better"),
            (0, "About the same"),
            (-1, "B is slightly better"),
            (-2, "B is much better"),
        )
    )
    question = "Which response is better?"
    item_template = "annotation/kinds/pairwise.html"
    item_columns = (
        ExportColumn("response_a_id", "string", "response A's id", "response_a__response_id"),
        ExportColumn("model_a", "string", "the model that wrote A", "response_a__model"),
        ExportColumn("response_a", "string", "response A's text", "response_a__text"),
        ExportColumn("response_b_id", "string", "response B's id", "response_b__response_id"),
        ExportColumn("model_b", "string", "the model that wrote B", "response_b__model"),
        ExportColumn("response_b", "string", "response B's text", "response_b__text"),
    )
    analyses = ("ratings",)
    comparison = True
