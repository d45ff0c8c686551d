"""Factories for test data: small, explicit, built through the real models and services."""

import itertools

from annotation.models import Batch, Item, Query, Response
from annotation.services.annotators import identify_annotator, join_batch
from annotation.services.batches import change_state, create_batch
from annotation.services.importing import import_items
from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.files import named_upload

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
        **{"instructions": "Rate **carefully**.", **settings},
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


def imported_batch(
    kind: str,
    rows: list[dict],
    *,
    slug: str,
    per_item: int,
    live: bool = True,
    filename: str = "items.jsonl",
    **settings,
) -> Batch:
    """A batch made as a researcher makes one: created, ``rows`` imported from a JSONL items
    file named ``filename``, then published unless ``live`` is false."""
    batch = create_batch(slug=slug, kind=kind, annotations_per_item=per_item, **settings)
    import_items(batch, named_upload(filename, rows), filename=filename)
    return change_state(batch, "live") if live else batch


def pair_columns(a: tuple[str, str], b: tuple[str, str]) -> dict:
    """The response columns of a pairwise items-file row: responses ``a`` and ``b``, each
    given as (id, text)."""
    return {"response_a_id": a[0], "response_a": a[1], "response_b_id": b[0], "response_b": b[1]}


def make_participant(batch, worker_id: str | None = None, platform: str = "generic"):
    annotator = identify_annotator(platform, worker_id or f"worker-{next(_counter)}")
    return join_batch(batch, annotator)


def label_every_item(batch, worker_ids: list[str], value_of, duration_ms=lambda worker: None):
    """Each worker in turn joins ``batch`` and labels the items it is handed until none is
    left for it: ``value_of(item, worker)`` is the value, ``duration_ms(worker)`` the time
    taken (``worker``: the index in ``worker_ids``)."""
    for worker, worker_id in enumerate(worker_ids):
        participation = make_participant(batch, worker_id)
        while (outcome := lease_next_item(batch, participation)).assignment is not None:
            value = value_of(outcome.assignment.item, worker)
            submit_label(participation.annotator, outcome.assignment.pk, value, duration_ms(worker))


def rate_until_drained(batch, people, value_of=lambda person, lease: 3, duration_ms=1500):
    """The participations in ``people`` take turns, each answering what it is handed
    (``value_of(person, lease)``), until nobody is handed anything more."""
    progress = True
    while progress:
        progress = False
        for person in people:
            outcome = lease_next_item(batch, person)
            if outcome.assignment is not None:
                value = value_of(person, outcome.assignment)
                submit_label(person.annotator, outcome.assignment.pk, value, duration_ms)
                progress = True


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
    rows = []
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
                a, b = (f"ra-{stem}", f"Answer A {stem}"), (f"rb-{stem}", f"Answer B {stem}")
                row.update(pair_columns(a, b))
            else:
                row.update(response_id=f"r-{stem}", response=f"Answer {stem}", model="model-x")
            rows.append(row)
    title = f"Taxonomy batch {number}"
    return imported_batch(kind, rows, slug=slug, per_item=per_item, live=live, title=title)
