"""The perspectivist export: the layout of the Learning With Disagreements shared tasks.

LeWiDi (Leonardelli et al. 2023, SemEval task 11) distributes each dataset as one JSON object
keyed by item, every item with its text, all of its annotators and their annotations, and
the soft label (each label's share of the annotations) — the whole distribution of opinion
rather than a gold label. This module writes a batch's counted labels that way:

* ``text``: the item's text fields (``query`` and ``response``; a pair: ``query``,
  ``response_a``, ``response_b``; then the texts a kind keeps in ``Item.content``);
* ``annotation task`` (the batch's kind), ``number of annotations``;
* ``annotators`` and ``annotations``: comma-separated, in submission order, the n-th
  annotation by the n-th annotator (pseudonyms; labels in the kind's canonical values);
* ``hard_label``: the most common label (ties: the lowest); ``soft_label``: label → share,
  every label of the kind's label set, zeros included;
* ``other_info``: the item's id, query id, category and sub-category, its model(s), and —
  when the batch has a questionnaire — ``annotator_answers``: each of the item's annotators'
  answers (pseudonym → question id → answer).

Items without counted labels and attention checks are left out. Only kinds with a fixed
label set can be written so.
"""

import json
from collections import Counter, defaultdict

from annotation.models import Batch, LabelStatus, Participation
from annotation.selectors import NO_FILTER, CategoryFilter, batch_items, batch_labels
from core.errors import InvalidInput


def applies(batch: Batch) -> bool:
    """Whether the batch's kind can be written in this layout: it has a fixed label set."""
    return bool(getattr(batch.task_kind, "label_set", None))


def _label_set(batch: Batch) -> list[int]:
    if not applies(batch):
        raise InvalidInput(
            "layout", f"the lewidi layout needs a kind with a fixed label set, not {batch.kind}"
        )
    return list(batch.task_kind.label_set)


def lewidi_document(batch: Batch, categories: CategoryFilter = NO_FILTER) -> dict:
    """The LeWiDi JSON object of the batch's counted labels (module docstring)."""
    label_set = _label_set(batch)
    slots, contents = batch.task_kind.response_slots, batch.task_kind.content_texts
    by_item: dict[int, list[tuple[str, int, int]]] = defaultdict(list)
    labels = (
        batch_labels(batch, categories)
        .filter(status=LabelStatus.COUNTED, item__is_check=False)
        .order_by("submitted_at", "pk")
        .values_list("item_id", "annotator__pseudonym", "annotator_id", "value")
    )
    for item_pk, pseudonym, annotator_pk, value in labels:
        by_item[item_pk].append((pseudonym, annotator_pk, value))
    answers = {}
    if batch.questionnaire:
        answers = dict(
            Participation.objects.filter(batch=batch).values_list(
                "annotator_id", "questionnaire_answers"
            )
        )
    fields = ["pk", "item_id", "query__query_id", "query__text", "query__category"]
    fields += ["query__subcategory"]
    # the texts of the kind's responses, then the models that wrote them
    fields += [f"{slot.field}__text" for slot in slots]
    fields += [f"{slot.field}__model" for slot in slots]
    fields += ["content"] if contents else []
    items = (
        batch_items(batch, categories)
        .filter(is_check=False, pk__in=list(by_item))
        .order_by("position", "pk")
        .values_list(*fields)
    )
    document = {}
    for row in items:
        pk, item_id, query_id, query, category, subcategory, *rest = row
        given = by_item[pk]
        text = {"query": query, **{slot.field: rest[i] for i, slot in enumerate(slots)}}
        models = {slot.model_key: rest[len(slots) + i] for i, slot in enumerate(slots)}
        if contents:
            kept = rest[-1] or {}
            text.update({content.key: kept.get(content.key, "") for content in contents})
        counts = Counter(value for _, _, value in given)
        n = len(given)
        most = max(counts.values())
        other_info = {
            "item_id": item_id,
            "query_id": query_id,
            "category": category,
            "subcategory": subcategory,
            **models,
        }
        if batch.questionnaire:
            other_info["annotator_answers"] = {
                pseudonym: answers.get(annotator_pk) or {} for pseudonym, annotator_pk, _ in given
            }
        document[item_id] = {
            "text": text,
            "annotation task": batch.kind,
            "number of annotations": n,
            "annotations": ",".join(str(value) for _, _, value in given),
            "annotators": ",".join(pseudonym for pseudonym, _, _ in given),
            "hard_label": str(min(label for label in label_set if counts.get(label) == most)),
            "soft_label": {str(label): counts.get(label, 0) / n for label in label_set},
            "other_info": other_info,
        }
    return document


def lewidi_text(batch: Batch, categories: CategoryFilter = NO_FILTER) -> str:
    """The document as JSON text (UTF-8, one item per line for readable diffs)."""
    document = lewidi_document(batch, categories)
    if not document:
        return "{}\n"
    lines = [
        f"{json.dumps(item_id, ensure_ascii=False)}: {json.dumps(entry, ensure_ascii=False)}"
        for item_id, entry in document.items()
    ]
    return "{\n" + ",\n".join(lines) + "\n}\n"
