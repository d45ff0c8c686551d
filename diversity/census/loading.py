"""The database → the pure census code: stored replies as records, stored norms as norms,
and a ``short_text`` batch's counted answers as human answers per category."""

from collections import defaultdict
from dataclasses import dataclass

from annotation.models import Batch, Label, LabelStatus
from diversity.census.core.normalise import merge_plurals
from diversity.census.models import Census, CensusNorm
from diversity.census.norms import CategoryNorm, PublishedNorms
from diversity.census.transcripts import CensusRecord

__all__ = ["HumanAnswers", "census_records", "human_answers", "published_norms"]


def census_records(census: Census) -> list[CensusRecord]:
    """Every stored reply, in the order it was read (which fixes the category order)."""
    rows = census.answers.order_by("pk").values_list("answerer", "category", "run", "reply")
    return [CensusRecord(answerer, category, run, reply) for answerer, category, run, reply in rows]


def published_norms(census: Census) -> PublishedNorms | None:
    """The imported norms file (human norms and its model columns apart), or ``None``."""
    rows = list(CensusNorm.objects.filter(census=census).order_by("position"))
    if not rows:
        return None
    return PublishedNorms(
        source=census.norms_source,
        human={
            row.category: CategoryNorm(
                row.category, row.human_modal, row.human_share, row.human_n_ge5
            )
            for row in rows
        },
        published_model={
            row.category: CategoryNorm(
                row.category, row.model_modal, row.model_share, row.model_n_ge5
            )
            for row in rows
        },
        wording_mismatch=frozenset(row.category for row in rows if row.wording_mismatch),
    )


@dataclass(frozen=True)
class HumanAnswers:
    """A batch's counted answers by census category, and what could not be placed."""

    by_category: dict[str, list[str]]
    n_labels: int  # counted labels read
    n_annotators: int
    n_without_category: int  # counted labels whose item names no category
    n_without_answer: int  # counted labels with no normalised answer


def _category_of(query_category: str, metadata) -> str:
    """The item's census category: its query's ``category``, else metadata ``category``."""
    if query_category and query_category.strip():
        return query_category.strip()
    value = metadata.get("category") if isinstance(metadata, dict) else None
    return value.strip() if isinstance(value, str) else ""


def human_answers(batch: Batch) -> HumanAnswers:
    """The counted labels of a ``short_text`` batch as answers per category.

    Each label's ``answer`` (the normalised answer) counts, in submission order (the mode's
    ties go to the answer given first); within each category the plural merge (docs/CENSUS.md,
    "Plural merge") is applied, as to the model field, so that both sides count answers the
    same way.
    """
    rows = (
        Label.objects.filter(batch=batch, status=LabelStatus.COUNTED)
        .order_by("submitted_at", "pk")
        .values_list("answer", "item__query__category", "item__metadata", "annotator_id")
    )
    raw: dict[str, list[str]] = defaultdict(list)
    annotators = set()
    n_labels = without_category = without_answer = 0
    for answer, query_category, metadata, annotator_id in rows.iterator(chunk_size=2000):
        n_labels += 1
        annotators.add(annotator_id)
        category = _category_of(query_category, metadata)
        if not category:
            without_category += 1
        elif not answer or not answer.strip():
            without_answer += 1
        else:
            raw[category].append(answer.strip())
    merged = {}
    for category, answers in raw.items():
        form_of = merge_plurals(answers)
        merged[category] = [form_of[answer] for answer in answers]
    return HumanAnswers(merged, n_labels, len(annotators), without_category, without_answer)
