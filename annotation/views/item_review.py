"""The staff's review of one item: ``/manage/<slug>/item/<item_id>`` (researchers and
admins), and the look-up form that leads there (``/manage/<slug>/item?item_id=``)."""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET

from annotation import access
from annotation.item_review import item_review
from annotation.models import Batch
from core.access import staff_page


@staff_page(access.can_view_batches)
@require_GET
def item_detail(request: HttpRequest, slug: str, item_id: str) -> HttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    item = batch.items.filter(item_id=item_id).select_related("query").first()
    if item is None:
        return _missing(request, batch, item_id)
    return render(
        request,
        "annotation/staff/item_review.html",
        {
            "batch": batch,
            "missing": "",
            "wanted": item.item_id,
            **item_review(batch, item),
            **access.abilities(request.user),
        },
    )


@staff_page(access.can_view_batches)
@require_GET
def item_lookup(request: HttpRequest, slug: str) -> HttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    wanted = request.GET.get("item_id", "").strip()
    if wanted and batch.items.filter(item_id=wanted).exists():
        return redirect("manage-item", slug=batch.slug, item_id=wanted)
    return _missing(request, batch, wanted)


def _missing(request: HttpRequest, batch: Batch, item_id: str) -> HttpResponse:
    message = (
        f"Batch {batch.slug} has no item {item_id!r}." if item_id else "Type an item id to look up."
    )
    return render(
        request,
        "annotation/staff/item_review.html",
        {
            "batch": batch,
            "item": None,
            "missing": message,
            "wanted": item_id,
            **access.abilities(request.user),
        },
        status=404 if item_id else 400,
    )
