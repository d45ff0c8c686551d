"""``pairwise``: (query, response A, response B) → +2 (A much better) … −2 (B much better).

Labels are stored relative to the imported A and B (SPEC.md). The page shows the two
responses neutrally as "Response 1" and "Response 2", in the order the lease chose
(``ab``: A first, ``ba``: B first; balanced across an item's annotators by the slots),
and the worker's choice is relative to what was shown: +2 = "Response 1 is much better".
``canonical`` turns it into the stored value.
"""

from django.utils.translation import gettext_lazy as _

from annotation.kinds.base import ChoiceKind, CleanLabel, ExportColumn, ResponseSlot, Scale

# the stored (canonical) values' meanings, for the data card and the analysis
CANONICAL_MEANINGS = {
    2: "A is much better",
    1: "A is slightly better",
    0: "About the same",
    -1: "B is slightly better",
    -2: "B is much better",
}


class PairwiseKind(ChoiceKind):
    name = "pairwise"
    label = "Pairwise preference (A/B)"
    response_slots = (
        ResponseSlot("response_a", "response_a_id", "response_a", "model_a"),
        ResponseSlot("response_b", "response_b_id", "response_b", "model_b"),
    )
    # the buttons, relative to the order shown
    scale = Scale(
        (
            (2, _("Response 1 is much better")),
            (1, _("Response 1 is slightly better")),
            (0, _("About the same")),
            (-1, _("Response 2 is slightly better")),
            (-2, _("Response 2 is much better")),
        )
    )
    question = _("Which response is better?")
    item_template = "annotation/kinds/pairwise.html"
    item_columns = (
        ExportColumn("response_a_id", "string", "response A's id", "response_a__response_id"),
        ExportColumn("model_a", "string", "the model that wrote A", "response_a__model"),
        ExportColumn("response_a", "string", "response A's text", "response_a__text"),
        ExportColumn("response_b_id", "string", "response B's id", "response_b__response_id"),
        ExportColumn("model_b", "string", "the model that wrote B", "response_b__model"),
        ExportColumn("response_b", "string", "response B's text", "response_b__text"),
    )
    value_columns = (
        ExportColumn(
            "value", "int", "the preference, relative to the imported A and B (+2 = A)", "value"
        ),
    )
    dense_columns = (
        *ChoiceKind.dense_columns,
        ExportColumn("shown_ab", "int", "counted labels given with A shown first"),
        ExportColumn("shown_ba", "int", "counted labels given with B shown first"),
    )
    analyses = ("ratings",)
    comparison = True

    def canonical(self, label: CleanLabel, shown_order: str) -> CleanLabel:
        if shown_order == "ba" and label.value is not None:
            return CleanLabel(value=-label.value)
        return label

    def shown(self, label) -> str:
        """The stored value as the worker chose it (relative to the order they saw)."""
        value = -label.value if label.shown_order == "ba" else label.value
        return str(value)

    def payload(self, item, batch, presentation: dict | None = None) -> dict:
        """Besides the imported ``response_a`` / ``response_b``: ``shown_order`` and the
        two responses in the order shown, ``response_1`` (shown first) and
        ``response_2`` (with their ``_html``), so that a client reading only the JSON
        shows them as the value's sign assumes: the worker's value is relative to
        ``response_1`` (+2 = Response 1 is much better)."""
        order = (presentation or {}).get("shown_order") or "ab"
        payload = super().payload(item, batch, {"first_is_a": order != "ba"})
        first, second = ("a", "b") if order != "ba" else ("b", "a")
        payload["shown_order"] = order
        for position, letter in (("1", first), ("2", second)):
            payload[f"response_{position}"] = payload[f"response_{letter}"]
            payload[f"response_{position}_html"] = payload[f"response_{letter}_html"]
        return payload

    def dense_values(self, labels: list[dict]) -> dict:
        return {
            "labels": [label["value"] for label in labels],
            "shown_ab": sum(label.get("shown_order") == "ab" for label in labels),
            "shown_ba": sum(label.get("shown_order") == "ba" for label in labels),
        }

    def label_distribution(self, batch, counted: dict) -> list[tuple[str, str, int]]:
        return [
            (str(value), CANONICAL_MEANINGS[value], counted.get(value, 0))
            for value in (2, 1, 0, -1, -2)
        ]
