"""The answer field: every answerer's valid answers per category, ready to be scored.

``build_field`` turns read records into the field exactly as docs/CENSUS.md prescribes: each reply
is normalised (failed cells are kept aside, not scored), each answerer's answers are put in run
order, plurals are merged within each category's pooled answers, and answerers with no valid
answer at all are left out. ``AnswerField.from_answers`` builds a field from answers that are
already final (no normalisation, no plural merge), e.g. for human answers or a hand-made field.

Order matters to the census (ties of the mode go to the answer that occurs first), so the field
fixes it: answerers in sorted name order, categories in the order they first occur in the
input, each answerer's answers in run order.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from operator import itemgetter

from diversity.census.core.normalise import failed_reason, merge_plurals, normalise_reply
from diversity.census.core.records import CensusRecord

__all__ = ["AnswerField", "FailedCell", "build_field"]


@dataclass(frozen=True)
class FailedCell:
    """A cell that gave no answer, and the junk-guard rule that says why."""

    model: str
    category: str
    run: int
    reason: str


@dataclass(frozen=True)
class AnswerField:
    """Valid answers by category, then by answerer; see the module docstring for the order.

    ``answerers`` are those with at least one valid answer, sorted; ``categories`` are those
    with at least one valid answer. ``answers[category][answerer]`` is absent when the answerer
    gave no valid answer in that category.
    """

    answers: Mapping[str, Mapping[str, tuple[str, ...]]]
    answerers: tuple[str, ...]
    categories: tuple[str, ...]
    failed: tuple[FailedCell, ...] = field(default=())

    @classmethod
    def from_answers(
        cls,
        answers: Mapping[str, Mapping[str, Sequence[str]]],
        failed: Sequence[FailedCell] = (),
    ) -> "AnswerField":
        """A field from final answers ``{category: {answerer: [answer, ...]}}`` (run order)."""
        by_category: dict[str, dict[str, tuple[str, ...]]] = {}
        for category, by_answerer in answers.items():
            kept = {
                answerer: tuple(given)
                for answerer, given in sorted(by_answerer.items())
                if len(given) > 0
            }
            if kept:
                by_category[category] = kept
        answerers = sorted({answerer for kept in by_category.values() for answerer in kept})
        return cls(by_category, tuple(answerers), tuple(by_category), tuple(failed))

    def pooled(self, category: str, without: str | None = None) -> list[str]:
        """The category's answers of every answerer (but ``without``), sorted answerer order."""
        return [
            answer
            for answerer, given in self.answers.get(category, {}).items()
            if answerer != without
            for answer in given
        ]


def build_field(records: Iterable[CensusRecord]) -> AnswerField:
    """Normalise every reply, merge plurals per category, and build the field (docs/CENSUS.md,
    "Plural merge" and "Which answerers and categories count")."""
    runs_by_category: dict[str, dict[str, list[tuple[int, str]]]] = {}
    failed: list[FailedCell] = []
    for record in records:
        # Categories keep the order of their first cell, answered or not; one with no answer
        # at all is dropped by from_answers.
        by_model = runs_by_category.setdefault(record.category, {})
        reason = failed_reason(record.reply)
        if reason is not None:
            failed.append(FailedCell(record.model, record.category, record.run, reason))
            continue
        answer = normalise_reply(record.reply)
        by_model.setdefault(record.model, []).append((record.run, answer))

    answers: dict[str, dict[str, list[str]]] = {}
    for category, by_model in runs_by_category.items():
        merged = merge_plurals(answer for runs in by_model.values() for _, answer in runs)
        answers[category] = {
            model: [merged[answer] for _, answer in sorted(runs, key=itemgetter(0))]
            for model, runs in by_model.items()
        }
    failed.sort(key=lambda cell: (cell.model, cell.category, cell.run))
    return AnswerField.from_answers(answers, failed)
