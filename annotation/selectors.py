"""Reads with non-trivial queries, shared by pages, API and commands."""

from django.db.models import Count, Q

from annotation.models import Batch, Item
from annotation.rendering import render_markdown


def item_payload(item: Item) -> dict:
    """What a worker is shown for an item: texts as given and as sanitised HTML."""
    payload = {
        "item_id": item.item_id,
        "query": item.query.text,
        "query_html": render_markdown(item.query.text),
    }
    if item.response_id is not None:
        payload["response"] = item.response.text
        payload["response_html"] = render_markdown(item.response.text)
    else:
        payload["response_a"] = item.response_a.text
        payload["response_a_html"] = render_markdown(item.response_a.text)
        payload["response_b"] = item.response_b.text
        payload["response_b_html"] = render_markdown(item.response_b.text)
    return payload


def load_item_for_display(item_pk: int) -> Item:
    return Item.objects.select_related("query", "response", "response_a", "response_b").get(
        pk=item_pk
    )


def batch_progress(batch: Batch) -> dict:
    """Counts of items by completion and of labels by status."""
    n = batch.annotations_per_item
    items = batch.items.aggregate(
        total=Count("pk"),
        complete=Count("pk", filter=Q(counted_count__gte=n)),
        untouched=Count("pk", filter=Q(reserved_count=0, counted_count=0)),
    )
    labels = batch.labels.aggregate(
        counted=Count("pk", filter=Q(status="counted")),
        surplus=Count("pk", filter=Q(status="surplus")),
        excluded=Count("pk", filter=Q(status="excluded")),
    )
    items["in_progress"] = items["total"] - items["complete"] - items["untouched"]
    return {"items": items, "labels": labels, "target_labels": items["total"] * n}
