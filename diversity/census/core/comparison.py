"""Is the model field more concentrated than people? Category by category against human norms.

Either side is anything with ``modal``, ``modal_share`` and ``n_ge5`` per category: a
``CategoryNorm`` (human norms, or the model columns published with them) or the
``CategoryFigures`` the census computes from transcripts. ``model_source`` records which model
field was compared (e.g. ``"published"`` or ``"computed"``), because the platform shows both
and must say which is which.
"""

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

__all__ = ["CategoryComparison", "Concentration", "NormsComparison", "compare_with_norms"]


class Concentration(Protocol):
    """How concentrated one field's answers to a category are."""

    @property
    def modal(self) -> str: ...

    @property
    def modal_share(self) -> float: ...

    @property
    def n_ge5(self) -> int: ...


@dataclass(frozen=True)
class CategoryComparison:
    """One shared category, human norm next to model field."""

    category: str
    human_modal: str
    human_share: float
    human_n_ge5: int
    model_modal: str
    model_share: float
    model_n_ge5: int

    @property
    def model_more_concentrated(self) -> bool:
        """The model field's modal share is strictly above the human one."""
        return self.model_share > self.human_share


@dataclass(frozen=True)
class NormsComparison:
    """The comparison over the shared categories; means are ``None`` when none is shared."""

    model_source: str
    categories: tuple[CategoryComparison, ...]
    n_model_more_concentrated: int
    mean_model_share: float | None
    mean_human_share: float | None
    mean_model_n_ge5: float | None
    mean_human_n_ge5: float | None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def compare_with_norms(
    human: Mapping[str, Concentration],
    model: Mapping[str, Concentration],
    model_source: str,
) -> NormsComparison:
    """Compare every category present on both sides, in the order of ``human``.

    n_model_more_concentrated = #{c : model_share(c) > human_share(c)}; the means are plain
    (category-weighted) means over the shared categories.
    """
    shared = tuple(
        CategoryComparison(
            category=category,
            human_modal=norm.modal,
            human_share=norm.modal_share,
            human_n_ge5=norm.n_ge5,
            model_modal=model[category].modal,
            model_share=model[category].modal_share,
            model_n_ge5=model[category].n_ge5,
        )
        for category, norm in human.items()
        if category in model
    )
    return NormsComparison(
        model_source=model_source,
        categories=shared,
        n_model_more_concentrated=sum(row.model_more_concentrated for row in shared),
        mean_model_share=_mean([row.model_share for row in shared]),
        mean_human_share=_mean([row.human_share for row in shared]),
        mean_model_n_ge5=_mean([row.model_n_ge5 for row in shared]),
        mean_human_n_ge5=_mean([row.human_n_ge5 for row in shared]),
    )
