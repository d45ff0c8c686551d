"""The whole census in one call: records in, per-answerer and per-category results out."""

from collections.abc import Iterable
from dataclasses import dataclass

from diversity.census.core.categories import CategoryFigures, category_figures
from diversity.census.core.field import AnswerField, build_field
from diversity.census.core.metrics import (
    BOOTSTRAP_DRAWS,
    BOOTSTRAP_SEED,
    AnswererMetrics,
    answerer_metrics,
)
from diversity.census.core.records import CensusRecord

__all__ = ["CensusResult", "run_census"]


@dataclass(frozen=True)
class CensusResult:
    """The scored field; ``census_report(result.per_model, result.per_category)`` is its JSON."""

    field: AnswerField
    per_model: dict[str, AnswererMetrics]
    per_category: dict[str, CategoryFigures]


def run_census(
    records: Iterable[CensusRecord], draws: int = BOOTSTRAP_DRAWS, seed: int = BOOTSTRAP_SEED
) -> CensusResult:
    """Normalise, merge plurals, and compute every docs/CENSUS.md figure for the records."""
    answer_field = build_field(records)
    return CensusResult(
        field=answer_field,
        per_model=answerer_metrics(answer_field, draws=draws, seed=seed),
        per_category=category_figures(answer_field),
    )
