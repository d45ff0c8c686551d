"""Making a ``similarity`` batch of a Genie set's answer pairs, for people to judge.

Each item is one (question, target answer, population answer) pair of the set whose two
answers are both given: ``query`` = the question's text, ``reference`` = the target
document's answer, ``candidate`` = the population document's answer, and metadata
``prompt_id``, ``question_id``, ``feature``, ``document_id``, ``population_id`` that lead
back to the pair (``diversity.genie.loading.batch_judgments``). The batch is created in
draft through the annotation services (``create_batch``, ``import_items``: the same checks
as any upload) and linked to the set.
"""

import hashlib
import io
import json

import numpy as np
from django.db import transaction

from annotation.models import DEFAULT_ANNOTATIONS_PER_ITEM, Batch
from annotation.services.batches import create_batch
from annotation.services.importing import import_items
from core import audit
from core.audit import Actor
from core.errors import InvalidInput
from diversity.genie.core.pairs import PairKey
from diversity.genie.loading import set_judgments
from diversity.genie.models import GenieSet

__all__ = ["INSTRUCTIONS", "create_similarity_batch", "judgeable_pairs"]

INSTRUCTIONS = (
    "Each page shows a question and two short answers to it. Say how similar the second "
    "answer (the candidate) is to the first (the reference): 1 = not similar at all, "
    "4 = essentially the same. Judge what the answers say, not how they are written."
)
MAX_ID_CHARS = 200


def judgeable_pairs(genie_set: GenieSet) -> list[tuple[PairKey, dict]]:
    """The set's pairs with both answers given, in sorted ``PairKey`` order, each with what
    an item needs: ``feature``, ``question``, ``target_answer``, ``population_answer``."""
    found: dict[PairKey, dict] = {}
    question_text: dict[tuple[str, str], str] = {}
    for row in set_judgments(genie_set):
        if row.question:
            question_text.setdefault((row.prompt_id, row.question_id), row.question)
        if row.target_answer is None or row.population_answer is None:
            continue
        key = PairKey(row.prompt_id, row.question_id, row.document_id, row.population_id)
        found.setdefault(
            key,
            {
                "feature": row.feature,
                "target_answer": row.target_answer,
                "population_answer": row.population_answer,
            },
        )
    for key, pair in found.items():
        pair["question"] = question_text.get((key.prompt_id, key.question_id))
    return sorted(found.items())


def _query_id(genie_set: GenieSet, key: PairKey) -> str:
    """A project-wide query id for a question of the set (the same id, the same text)."""
    query_id = f"genie:{genie_set.name}:{key.prompt_id}:{key.question_id}"
    if len(query_id) > MAX_ID_CHARS:
        digest = hashlib.sha256(query_id.encode()).hexdigest()[:24]
        query_id = f"genie:{genie_set.name}:{digest}"
    return query_id


def create_similarity_batch(
    genie_set: GenieSet,
    slug: str,
    *,
    per_item: int = DEFAULT_ANNOTATIONS_PER_ITEM,
    pairs: int | None = None,
    seed: int = 0,
    title: str = "",
    actor: Actor | None = None,
) -> Batch:
    """A draft ``similarity`` batch of the set's judgeable pairs (all of them, or ``pairs``
    of them drawn without replacement by ``numpy.random.default_rng(seed)``), linked to the
    set as its human batch."""
    candidates = judgeable_pairs(genie_set)
    if not candidates:
        raise InvalidInput("pairs", f"Genie set {genie_set.name!r} has no pair with both answers")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InvalidInput("seed", f"must be a non-negative integer, got {seed!r}")
    if pairs is not None:
        if isinstance(pairs, bool) or not isinstance(pairs, int) or not 1 <= pairs:
            raise InvalidInput("pairs", f"must be a positive integer, got {pairs!r}")
        if pairs < len(candidates):
            chosen = np.random.default_rng(seed).choice(len(candidates), pairs, replace=False)
            candidates = [candidates[index] for index in sorted(chosen)]
    missing = sorted(
        {f"{k.prompt_id}/{k.question_id}" for k, pair in candidates if not pair["question"]}
    )
    if missing:
        raise InvalidInput(
            "question",
            f"the set has no text for question {', '.join(missing[:5])}"
            + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
            + "; import its file with a 'question' column to ask people",
        )
    rows = [
        {
            "item_id": f"pair-{index:05d}",
            "query_id": _query_id(genie_set, key),
            "query": pair["question"],
            "reference": pair["target_answer"],
            "candidate": pair["population_answer"],
            "prompt_id": key.prompt_id,
            "question_id": key.question_id,
            "feature": pair["feature"],
            "document_id": key.document_id,
            "population_id": key.population_id,
        }
        for index, (key, pair) in enumerate(candidates)
    ]
    items = io.BytesIO("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows).encode())
    with transaction.atomic():
        batch = create_batch(
            slug=slug,
            kind="similarity",
            title=title or f"Genie similarity: {genie_set.name}",
            annotations_per_item=per_item,
            instructions=INSTRUCTIONS,
            actor=actor,
        )
        import_items(batch, items, filename=f"genie-{genie_set.name}-pairs.jsonl", actor=actor)
        GenieSet.objects.filter(pk=genie_set.pk).update(human_batch=batch)
        genie_set.human_batch = batch
        audit.record(
            "genie.batch",
            subject=genie_set,
            actor=actor,
            changes={"batch": batch.slug, "items": len(rows), "per_item": per_item, "seed": seed},
        )
    return batch
