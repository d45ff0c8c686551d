"""Read-only queries of the analysis app."""

from django.db.models import Count, F

from analysis.models import Score, ScoreSource
from annotation.models import Batch, Item


def coverage(batch: Batch) -> list[dict]:
    """The score sources that score any of the batch's items, and how many of them.

    An item counts as scored by a source when the source scored the item itself, or its
    response (absolute), or both of its responses (pairwise). Each source:
    ``{source, kind, n_items_scored, n_items, coverage}``, ordered by name. Counted by the
    database with a handful of aggregate queries (through the item's responses, directly,
    and their overlap), whatever the number of items.

    Attention checks are left out on both sides: they are outside N and never analysed, so
    a check scored (or not) says nothing about how much of the batch a source covers.
    """
    items = Item.objects.filter(batch=batch, is_check=False).order_by()
    n_items = items.count()
    if n_items == 0:
        return []
    direct_scores = Score.objects.filter(item__batch=batch, item__is_check=False).order_by()
    if batch.task_kind.comparison:
        via_responses = items.filter(
            response_a__scores__source=F("response_b__scores__source")
        ).values(source_pk=F("response_a__scores__source"))
        overlap = direct_scores.filter(
            item__response_a__scores__source=F("source"),
            item__response_b__scores__source=F("source"),
        )
    else:
        via_responses = items.filter(response__scores__isnull=False).values(
            source_pk=F("response__scores__source")
        )
        overlap = direct_scores.filter(item__response__scores__source=F("source"))

    # (source, item) is unique in each of the three, so plain counts are item counts
    scored: dict[int, int] = {}
    for rows, sign in (
        (via_responses.annotate(n=Count("pk")).values_list("source_pk", "n"), 1),
        (direct_scores.values("source").annotate(n=Count("pk")).values_list("source", "n"), 1),
        (overlap.values("source").annotate(n=Count("pk")).values_list("source", "n"), -1),
    ):
        for source_pk, n in rows:
            scored[source_pk] = scored.get(source_pk, 0) + sign * n

    sources = ScoreSource.objects.filter(pk__in=[pk for pk, n in scored.items() if n > 0])
    return [
        {
            "source": source.name,
            "kind": source.kind,
            "n_items_scored": scored[source.pk],
            "n_items": n_items,
            "coverage": scored[source.pk] / n_items,
        }
        for source in sources.order_by("name")
    ]
