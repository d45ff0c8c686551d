"""Per-category census figures (docs/CENSUS.md, "Per-category figures"): how concentrated the whole
field's answers to one category are.

Every answerer's valid answers in the category are pooled (sorted answerer order, run order);
ties between equally frequent answers go to the one that occurs first in that pool.
"""

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from diversity.census.core.field import AnswerField

__all__ = [
    "FREQUENT_SHARE",
    "CategoryFigures",
    "category_figures",
    "figures_of_pool",
    "frequent_answer_count",
    "modal_answer",
    "modal_share",
    "second_place_share",
]

FREQUENT_SHARE = 0.05  # "given by >= 5 %", as in the human category norms


@dataclass(frozen=True)
class CategoryFigures:
    """The pooled answers of one category, summarised.

    ``second_share`` is ``None`` when every answer is the modal one (no runner-up exists).
    """

    category: str
    modal: str
    modal_share: float
    n_distinct: int
    n_answers: int
    second_share: float | None
    n_ge5: int  # distinct answers that make up at least FREQUENT_SHARE of the pool


def modal_answer(answers: Sequence[str]) -> str:
    """The most frequent answer; among equally frequent ones, the one that occurs first.

    ``answers`` must not be empty.
    """
    counts = Counter(answers)
    highest = max(counts.values())
    return next(answer for answer in answers if counts[answer] == highest)


def modal_share(answers: Sequence[str]) -> float:
    """count(modal answer) / len(answers), the mode as in ``modal_answer``."""
    return Counter(answers)[modal_answer(answers)] / len(answers)


def second_place_share(answers: Sequence[str]) -> float | None:
    """Second-place consensus: the share of the non-modal answers taken by the runner-up.

    ``count(runner-up) / (len(answers) - count(mode))``, where the runner-up is the modal
    answer of the answers left once every copy of the mode is removed (ties: first to occur).
    ``None`` when no non-modal answer exists.
    """
    mode = modal_answer(answers)
    rest = [answer for answer in answers if answer != mode]
    if not rest:
        return None
    return Counter(rest)[modal_answer(rest)] / len(rest)


def frequent_answer_count(answers: Sequence[str], share: float = FREQUENT_SHARE) -> int:
    """Number of distinct answers with ``count / len(answers) >= share``."""
    total = len(answers)
    return sum(count / total >= share for count in Counter(answers).values())


def figures_of_pool(category: str, answers: Sequence[str]) -> CategoryFigures:
    """All figures of one category's pooled answers (non-empty, in pool order)."""
    mode = modal_answer(answers)
    return CategoryFigures(
        category=category,
        modal=mode,
        modal_share=modal_share(answers),
        n_distinct=len(set(answers)),
        n_answers=len(answers),
        second_share=second_place_share(answers),
        n_ge5=frequent_answer_count(answers),
    )


def category_figures(answer_field: AnswerField) -> dict[str, CategoryFigures]:
    """Figures of every category of the field, in the field's category order."""
    return {
        category: figures_of_pool(category, answer_field.pooled(category))
        for category in answer_field.categories
    }
