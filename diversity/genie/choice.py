"""Choosing which difference to read: two models, or two methods (e.g. ``baseline`` and
``persona``), of one judgment source of a Genie report — the set page's "Compare" form and
the API's ``…/comparison`` parameters check a choice here, and ``compared`` computes it with
``core.report.chosen_comparison`` from the report's documents and its own bootstrap settings
(the same figures as the report's table for that pair, whatever pair is chosen)."""

from typing import NamedTuple

from django import forms

from core.errors import InvalidInput
from diversity.genie.core.report import DIMENSIONS, chosen_comparison, comparison_groups

__all__ = ["Choice", "CompareForm", "check_choice", "compared", "offered"]

DIMENSION_TITLES = {"model": "Models", "method": "Methods"}


class Choice(NamedTuple):
    source: str  # "llm" or "human"
    by: str  # "model" or "method"
    first: str
    second: str


def _scored_sources(report: dict) -> list[str]:
    return [source for source, scores in (report.get("scores") or {}).items() if scores]


def offered(report: dict, source: str) -> dict[str, list[str]]:
    """The groups of each dimension that has at least two, for ``source``'s scores."""
    scores = (report.get("scores") or {}).get(source) or {}
    found = {}
    for dimension in DIMENSIONS:
        groups = comparison_groups(scores.get("per_document", []), dimension)
        if len(groups) >= 2:
            found[dimension] = groups
    return found


def check_source(report: dict, source: str) -> str:
    """``source`` when the report has its scores, else ``InvalidInput`` naming it."""
    if source not in _scored_sources(report):
        known = ", ".join(_scored_sources(report)) or "none"
        raise InvalidInput("source", f"{source!r} has no scores in this report ({known})")
    return source


def check_choice(report: dict, source: str, by: str, first: str, second: str) -> Choice:
    """The choice, or ``InvalidInput`` naming the field that cannot be read from it."""
    check_source(report, source)
    groups = offered(report, source)
    if by not in groups:
        known = ", ".join(groups) or "none: every document has the same model and method"
        raise InvalidInput("by", f"must be model or method with two groups or more ({known})")
    for field, name in (("first", first), ("second", second)):
        if name not in groups[by]:
            raise InvalidInput(field, f"{name!r} is not a {by} here ({', '.join(groups[by])})")
    if first == second:
        raise InvalidInput("second", f"choose a {by} other than {first!r}")
    return Choice(source, by, first, second)


def compared(report: dict, choice: Choice) -> dict:
    """``chosen_comparison`` of the choice, with the report's bootstrap draws, seed and
    permutations, and the source it is of."""
    settings = report["settings"]
    scores = report["scores"][choice.source]
    result = chosen_comparison(
        scores["per_document"],
        report.get("features", []),
        choice.by,
        choice.first,
        choice.second,
        draws=settings["bootstrap"],
        seed=settings["seed"],
        permutations=settings.get("permutations", settings["bootstrap"]),
    )
    return {"source": choice.source, **result, "ci_level": settings["ci_level"]}


class CompareForm(forms.Form):
    """The set page's "Compare two models or two methods" form (GET): the judgment source and
    two groups, each offered as ``DIMENSION:GROUP`` under the dimension's heading."""

    source = forms.ChoiceField(label="Judgments")
    first = forms.ChoiceField(label="First")
    second = forms.ChoiceField(label="Second (subtracted)")

    def __init__(self, report: dict, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.report = report
        sources = _scored_sources(report)
        self.fields["source"].choices = [(source, source) for source in sources]
        grouped: dict[str, dict[str, None]] = {}
        for source in sources:
            for dimension, groups in offered(report, source).items():
                grouped.setdefault(dimension, {}).update(dict.fromkeys(groups))
        choices = [
            (DIMENSION_TITLES[dimension], [(f"{dimension}:{g}", g) for g in groups])
            for dimension, groups in grouped.items()
        ]
        self.fields["first"].choices = choices
        self.fields["second"].choices = choices
        self.has_choices = bool(choices)
        if choices and not self.is_bound:  # start with the first two groups of one kind
            first_kind = choices[-1][1]  # methods when there are any: the usual question
            self.initial = {
                "source": sources[0],
                "first": first_kind[0][0],
                "second": first_kind[1][0],
            }

    def clean(self):
        cleaned = super().clean()
        if self.errors:
            return cleaned
        by, _, first = cleaned["first"].partition(":")
        other_by, _, second = cleaned["second"].partition(":")
        if by != other_by:
            raise forms.ValidationError("Choose two models, or two methods — not one of each.")
        try:
            cleaned["choice"] = check_choice(self.report, cleaned["source"], by, first, second)
        except InvalidInput as wrong:
            raise forms.ValidationError(wrong.message) from wrong
        return cleaned
