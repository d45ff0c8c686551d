"""The database → the pure Genie code: a set's rows as judgments, and a ``similarity``
batch's counted labels as human judgments of the set's pairs."""

from dataclasses import dataclass, replace

from annotation.models import Batch, Item, Label, LabelStatus
from diversity.genie.core.judgments import JUDGMENT_FIELDS
from diversity.genie.core.pairs import PairKey
from diversity.genie.models import GenieSet
from diversity.genie.records import Judgment

__all__ = ["BatchJudgments", "PAIR_KEYS", "batch_judgments", "set_judgments"]

# The item metadata that names the pair an item of a similarity batch shows (genie_batch).
PAIR_KEYS = ("prompt_id", "question_id", "document_id", "population_id")


def set_judgments(genie_set: GenieSet) -> list[Judgment]:
    """Every stored row of the set as a ``Judgment``, in file order."""
    rows = genie_set.judgments.order_by("position").values_list(*JUDGMENT_FIELDS)
    return [Judgment(*row) for row in rows.iterator(chunk_size=5000)]


@dataclass(frozen=True)
class BatchJudgments:
    """A batch's counted labels as human judgments of the set's pairs."""

    judgments: list[Judgment]
    n_items: int  # items of the batch
    n_matched_items: int  # items that name a pair of the set
    n_labels: int  # counted labels of the matched items
    n_annotators: int


def _pair_of(metadata) -> PairKey | None:
    if not isinstance(metadata, dict):
        return None
    values = [metadata.get(key) for key in PAIR_KEYS]
    if not all(isinstance(value, str) and value for value in values):
        return None
    return PairKey(*values)


def batch_judgments(batch: Batch, set_rows: list[Judgment]) -> BatchJudgments:
    """One ``human`` judgment per counted label of each batch item that names a pair of the
    set (its metadata ``prompt_id``, ``question_id``, ``document_id``, ``population_id``).

    The pair's feature and answers are the set's, so the human and LLM judgments of a pair
    are judgments of the same two answers; the label's value (1-4) is its similarity.
    Items naming no pair of the set are counted, not used.
    """
    known: dict[PairKey, Judgment] = {}
    for row in set_rows:
        key = PairKey(row.prompt_id, row.question_id, row.document_id, row.population_id)
        known.setdefault(key, row)
    pair_of_item: dict[int, PairKey] = {}
    n_items = 0
    for pk, metadata in Item.objects.filter(batch=batch, is_check=False).values_list(
        "pk", "metadata"
    ):
        n_items += 1
        key = _pair_of(metadata)
        if key is not None and key in known:
            pair_of_item[pk] = key
    judgments = []
    annotators = set()
    labels = (
        Label.objects.filter(batch=batch, status=LabelStatus.COUNTED)
        .order_by("pk")
        .values_list("item_id", "value", "annotator_id")
    )
    for item_pk, value, annotator_id in labels.iterator(chunk_size=5000):
        if item_pk not in pair_of_item or value is None:
            continue
        row = known[pair_of_item[item_pk]]
        annotators.add(annotator_id)
        judgments.append(replace(row, similarity=float(value), source="human"))
    return BatchJudgments(judgments, n_items, len(pair_of_item), len(judgments), len(annotators))
