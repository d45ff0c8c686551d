"""Factories for test data: small, explicit, built through the real models and services."""

import io
import itertools
import json

from annotation.models import Item, Query, Response
from annotation.services.annotators import identify_annotator, join_batch
from annotation.services.batches import change_state, create_batch
from annotation.services.importing import import_items

_counter = itertools.count(1)


def make_batch(
    *,
    kind: str = "absolute",
    n_items: int = 3,
    per_item: int = 3,
    live: bool = True,
    slug: str | None = None,
    **settings,
):
    number = next(_counter)
    batch = create_batch(
        slug=slug or f"batch-{number}",
        kind=kind,
        title=f"Test batch {number}",
        annotations_per_item=per_item,
        instructions="Rate **carefully**.",
        **settings,
    )
    query = Query.objects.create(query_id=f"q-{number}", text=f"Question {number}?")
    items = []
    for index in range(n_items):
        responses = [
            Response.objects.create(
                response_id=f"r-{number}-{index}-{side}",
                query=query,
                model="model-x",
                text=f"Answer {index}{side}",
            )
            for side in (("a", "b") if kind == "pairwise" else ("",))
        ]
        fields = (
            {"response_a": responses[0], "response_b": responses[1]}
            if kind == "pairwise"
            else {"response": responses[0]}
        )
        items.append(
            Item(
                batch=batch,
                item_id=f"item-{index}",
                position=index,
                query=query,
                target=per_item,
                **fields,
            )
        )
    Item.objects.bulk_create(items)
    if live and n_items:
        batch = change_state(batch, "live")
    return batch


def make_participant(batch, worker_id: str | None = None, platform: str = "generic"):
    annotator = identify_annotator(platform, worker_id or f"worker-{next(_counter)}")
    return join_batch(batch, annotator)


def make_categorised_batch(
    taxonomy: list[tuple[str, str, int]],
    *,
    kind: str = "absolute",
    per_item: int = 3,
    live: bool = True,
    slug: str | None = None,
):
    """A batch imported (through ``import_items``) from a JSONL file: for each
    ``(category, subcategory, n_items)`` that many items, each with its own query of that
    category and sub-category (``""``: none). Item ids are ``<category>-<number>``."""
    number = next(_counter)
    slug = slug or f"tax-{number}"
    batch = create_batch(
        slug=slug, kind=kind, title=f"Taxonomy batch {number}", annotations_per_item=per_item
    )
    lines = []
    for category, subcategory, n_items in taxonomy:
        for index in range(n_items):
            stem = f"{slug}-{category or 'none'}-{subcategory or 'none'}-{index}".lower()
            row = {
                "item_id": f"{category or 'none'}-{subcategory or 'none'}-{index}".lower(),
                "query_id": f"q-{stem}",
                "query": f"Question {stem}?",
                "category": category,
                "subcategory": subcategory,
            }
            if kind == "pairwise":
                row.update(
                    response_a_id=f"ra-{stem}",
                    response_a=f"Answer A {stem}",
                    response_b_id=f"rb-{stem}",
                    response_b=f"Answer B {stem}",
                )
            else:
                row.update(response_id=f"r-{stem}", response=f"Answer {stem}", model="model-x")
            lines.append(json.dumps(row) + "\n")
    source = io.BytesIO("".join(lines).encode("utf-8"))
    import_items(batch, source, filename="items.jsonl")
    if live and lines:
        batch = change_state(batch, "live")
    return batch
