"""The Genie judgment record every reader produces and every figure consumes (its file
format is documented in ``diversity.genie.records``)."""

from dataclasses import dataclass, fields
from operator import attrgetter

__all__ = ["JUDGMENT_FIELDS", "Judgment", "judgment_values"]


@dataclass(frozen=True)
class Judgment:
    """One similarity judgment between a target's answer and a population answer.

    An answer is ``None`` when the document gave none; ``similarity`` is ``None`` only when
    an answer is missing (such a pair is never scored). ``question`` is the question's text
    when the row gave one.
    """

    prompt_id: str
    question_id: str
    feature: str
    document_id: str
    population_id: str
    target_answer: str | None
    population_answer: str | None
    similarity: float | None
    source: str
    question: str | None = None
    prompt: str | None = None  # the prompt's text, when the file gives it
    model: str | None = None  # the model that wrote the target document
    method: str | None = None  # how it was prompted or decoded
    source_model: str | None = None  # the model's name as the file gives it (GENIE's Model_1)
    source_document_id: str | None = None  # the file's own document id (GENIE's DocID_1)

    @property
    def usable(self) -> bool:
        """Both answers present and judged: the pair counts in the scores."""
        return (
            self.target_answer is not None
            and self.population_answer is not None
            and self.similarity is not None
        )


# A judgment's fields in order: the stored row's columns of the same names (GenieJudgment).
JUDGMENT_FIELDS = tuple(field.name for field in fields(Judgment))
# (judgment) -> its values in the order of JUDGMENT_FIELDS
judgment_values = attrgetter(*JUDGMENT_FIELDS)
