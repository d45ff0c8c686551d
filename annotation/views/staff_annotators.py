"""The annotator pages of a batch under ``/manage/``: the annotator table (sortable by the
kind's extra columns) and excluding or re-including one annotator or a group.

Researchers see the table (without platform ids); admins also exclude and re-include
(``annotation.services.annotators``). Like the other staff pages (``staff_pages``), a
service error is shown on the page.
"""

from django.contrib import messages
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_POST

from annotation import access, selectors
from annotation.models import (
    Annotator,
    Batch,
)
from annotation.pages import taxonomy_panel
from annotation.selectors import CategoryFilter
from annotation.services import annotators as annotator_services
from core import extensions
from core.access import staff_page
from core.audit import Actor
from core.errors import ServiceError


def _number_or_none(text) -> float | None:
    try:
        return float(str(text).replace("−", "-"))
    except (TypeError, ValueError):
        return None


def _sort_by_extra_column(request: HttpRequest, rows: list[dict], extra_columns: list[dict]) -> str:
    """Sort the rows by a sortable extra column (``?sort=KEY`` ascending, ``-KEY``
    descending; rows without a value last) and give each sortable column the address that
    sorts by it (ascending first, then the other way). Returns the sort in force."""
    wanted = request.GET.get("sort", "")
    key = wanted.removeprefix("-")
    for index, column in enumerate(extra_columns):
        if not column["sortable"]:
            continue
        params = request.GET.copy()
        params["sort"] = f"-{column['key']}" if wanted == column["key"] else column["key"]
        column["sort_url"] = f"?{params.urlencode()}"
        column["sorted"] = "descending" if wanted == f"-{key}" else "ascending"
        column["sorted"] = column["sorted"] if key == column["key"] else ""
        if key != column["key"]:
            continue
        present = [row for row in rows if _number_or_none(row["extra"][index]) is not None]
        absent = [row for row in rows if _number_or_none(row["extra"][index]) is None]
        present.sort(
            key=lambda row: _number_or_none(row["extra"][index]), reverse=wanted.startswith("-")
        )
        rows[:] = present + absent
        return wanted
    return ""


@staff_page(access.can_view_batches)
@require_GET
def annotator_list(request: HttpRequest, slug: str) -> HttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    categories = CategoryFilter.from_params(request.GET)
    abilities = access.abilities(request.user)
    rows = selectors.annotator_rows(batch, categories)
    if not abilities["can_manage_annotators"]:
        for row in rows:  # platform ids identify people: admins only
            row.pop("platform_id")
    extra_columns = extensions.columns("annotators", request.user, batch)
    for row in rows:
        row["checks"] = row["attention_checks_passed"] + row["attention_checks_failed"]
        if row["median_duration_ms"] is not None:
            row["median_seconds"] = round(row["median_duration_ms"] / 1000, 1)
        row["extra"] = [column["values"].get(row["annotator"]) for column in extra_columns]
    sort = _sort_by_extra_column(request, rows, extra_columns)
    return render(
        request,
        "annotation/staff/annotators.html",
        {
            "batch": batch,
            "rows": rows,
            "n_excluded": sum(row["status"] == "excluded" for row in rows),
            "extra_columns": extra_columns,
            "sort": sort,
            "sharing_groups": selectors.sharing_groups(batch),
            "taxonomy": taxonomy_panel(request, batch.items.all(), categories),
            **abilities,
        },
    )


def _change_participation(request: HttpRequest, slug: str, pseudonym: str, include: bool):
    batch = get_object_or_404(Batch, slug=slug)
    annotator = get_object_or_404(Annotator, pseudonym=pseudonym)
    try:
        if include:
            outcome = annotator_services.include_annotator(
                batch, annotator, actor=Actor.of(request.user)
            )
            note = f"{outcome['counted']} labels count again"
            if outcome["surplus"]:
                note += f", {outcome['surplus']} became surplus (their slots were refilled)"
            messages.success(request, f"Included {pseudonym} again: {note}.")
        else:
            affected = annotator_services.exclude_annotator(
                batch, annotator, actor=Actor.of(request.user)
            )
            messages.success(
                request,
                f"Excluded {pseudonym}: {affected} labels no longer count and their slots "
                "are open again.",
            )
    except ServiceError as error:
        messages.error(request, str(error))
    return redirect("manage-annotators", slug=batch.slug)


@staff_page(access.can_manage_annotators)
@require_POST
def annotator_exclude(request: HttpRequest, slug: str, pseudonym: str) -> HttpResponse:
    return _change_participation(request, slug, pseudonym, include=False)


@staff_page(access.can_manage_annotators)
@require_POST
def annotator_include(request: HttpRequest, slug: str, pseudonym: str) -> HttpResponse:
    return _change_participation(request, slug, pseudonym, include=True)


@staff_page(access.can_manage_annotators)
@require_POST
def annotators_exclude_group(request: HttpRequest, slug: str) -> HttpResponse:
    """Exclude a group of annotators in one action (ids sharing an address or device)."""
    batch = get_object_or_404(Batch, slug=slug)
    names = request.POST.getlist("annotator")
    group = request.POST.get("group", "a group")[:40]
    affected = annotator_services.exclude_group(
        batch, names, actor=Actor.of(request.user), reason=f"shared {group}"
    )
    if affected:
        messages.success(
            request,
            f"Excluded {len(affected)} annotators of {group}: "
            f"{sum(affected.values())} labels no longer count and their slots are open again.",
        )
    else:
        messages.error(request, "Nobody was excluded: they were excluded already.")
    return redirect("manage-annotators", slug=batch.slug)
