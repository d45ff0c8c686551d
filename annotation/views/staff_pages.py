"""Admin pages for project admins and researchers, under ``/manage/``.

Thin views: they check the role (``annotation.access``), translate forms into service
calls (``annotation.services``) and render the outcome. Every error a user can cause —
``InvalidInput``, ``Conflict``, ``NotFound``, ``ImportRejected`` — is shown on the page.

* researcher: sees batches, their live figures, the worker preview and the annotator
  table (without platform ids), and downloads exports;
* admin: also creates and edits batches, changes their state, uploads items and
  excludes / re-includes annotators.

The annotator table and exclusions are in ``staff_annotators``.

Anonymous visitors are sent to the login page; a logged-in user without a role gets 403.

Every page that lists or summarises items or labels (the batch list, the overview, the
preview, the annotators) takes ``?category=`` and ``?subcategory=``
(``annotation.selectors.CategoryFilter``) and shows the counts per category with links.
"""

import dataclasses

from django import forms
from django.conf import settings
from django.contrib import messages
from django.core.exceptions import ValidationError
from django.db.models import Count, IntegerField, OuterRef, Subquery
from django.db.models.functions import Coalesce
from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from annotation import access, selectors
from annotation.forms import BatchCreateForm, BatchEditForm
from annotation.models import (
    Batch,
    Item,
    Label,
    LabelStatus,
)
from annotation.pages import render_batch_page, taxonomy_panel
from annotation.rendering import render_markdown
from annotation.selectors import CategoryFilter
from annotation.services import batches as batch_services
from annotation.services.import_jobs import start_import_job
from annotation.services.importing import import_items
from annotation.services.invitations import invitation_table, new_invitations
from annotation.setting_rules import MAX_COMMENT_CHARS
from annotation.settings_spec import PLATFORM_CHOICES
from core import csv_files
from core.access import staff_page
from core.audit import Actor, event_payload, history, record
from core.errors import InvalidInput, ServiceError
from core.models import Job
from core.tabular import ImportRejected
from core.uploads import receive_upload


def _show_service_error(form: forms.Form, error: Exception) -> None:
    """Put a service error next to the field it names (``"field: message"``), or on top."""
    if isinstance(error, ValidationError) and hasattr(error, "error_dict"):
        for field, problems in error.message_dict.items():
            form.add_error(field if field in form.fields else None, problems)
        return
    if isinstance(error, InvalidInput):
        field, message = error.field, error.message
    else:
        field, _, message = str(error).partition(": ")
    field = _kind_setting_field_name(form, field)
    if field in form.fields and message:
        form.add_error(field, message)
    else:
        form.add_error(None, str(error))


def _kind_setting_field_name(form: forms.Form, field: str) -> str:
    """The form's field of a kind's setting the services name ``kind_settings.<name>``:
    ``setting__<name>`` on a batch's settings form, ``<kind>__<name>`` on the new-batch
    form (every kind's settings are there; the chosen kind's count)."""
    name = field.removeprefix("kind_settings.")
    if name == field:
        return field
    kind = getattr(form, "cleaned_data", {}).get("kind")
    for candidate in (f"setting__{name}", f"{kind}__{name}"):
        if candidate in form.fields:
            return candidate
    return field


# --------------------------------------------------------------------------- batch list


def _batches_with_totals(categories: CategoryFilter):
    """Batches, newest first, with item and counted-label counts and the last label time
    (of the items ``categories`` covers; with a filter, only batches holding such items)."""

    def count(model, item_path: str, **filters):
        rows = (
            model.objects.filter(categories.q(item_path), batch=OuterRef("pk"), **filters)
            .order_by()
            .values("batch")
            .annotate(n=Count("pk"))
            .values("n")
        )
        return Coalesce(Subquery(rows, output_field=IntegerField()), 0)

    last_label = (
        Label.objects.filter(categories.q("item__"), batch=OuterRef("pk"))
        .order_by("-submitted_at")
        .values("submitted_at")
    )
    batches = Batch.objects.annotate(
        n_items=count(Item, ""),
        n_counted=count(Label, "item__", status=LabelStatus.COUNTED),
        last_label_at=Subquery(last_label[:1]),
    ).order_by("-created_at", "-pk")
    return batches.filter(n_items__gt=0) if categories.active else batches


@staff_page(access.can_view_batches)
@require_GET
def batch_list(request: HttpRequest) -> HttpResponse:
    categories = CategoryFilter.from_params(request.GET)
    rows = []
    for batch in _batches_with_totals(categories):
        target = batch.n_items * batch.annotations_per_item
        rows.append(
            {
                "batch": batch,
                "target": target,
                "percent": round(100 * batch.n_counted / target, 1) if target else 0,
            }
        )
    return render(
        request,
        "annotation/staff/batch_list.html",
        {
            "rows": rows,
            "taxonomy": taxonomy_panel(request, Item.objects.all(), categories),
            "batch_links": categories.query_string(),
            **access.abilities(request.user),
        },
    )


@staff_page(access.can_manage_batches)
@require_http_methods(["GET", "POST"])
def batch_new(request: HttpRequest) -> HttpResponse:
    form = BatchCreateForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            batch = batch_services.create_batch(
                **form.service_arguments(), actor=Actor.of(request.user)
            )
        except ServiceError as error:
            _show_service_error(form, error)
        else:
            messages.success(request, f"Created batch {batch.slug}. Upload its items next.")
            return redirect("manage-batch", slug=batch.slug)
    return render(
        request,
        "annotation/staff/batch_form.html",
        {"form": form, "creating": True, **access.abilities(request.user)},
        status=400 if form.is_bound and form.errors else 200,
    )


# --------------------------------------------------------------------------- one batch


@staff_page(access.can_view_batches)
@require_GET
def batch_detail(request: HttpRequest, slug: str) -> HttpResponse:
    return render_batch_page(request, get_object_or_404(Batch, slug=slug))


@staff_page(access.can_manage_batches)
@require_POST
def batch_state(request: HttpRequest, slug: str) -> HttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    wanted = request.POST.get("state", "")
    previous_state = batch.state
    try:
        batch = batch_services.change_state(batch, wanted, actor=Actor.of(request.user))
    except ServiceError as error:
        messages.error(request, str(error))
    else:
        messages.success(request, batch_services.state_change_summary(batch, previous_state))
    return redirect("manage-batch", slug=batch.slug)


@staff_page(access.can_manage_batches)
@require_POST
def batch_upload(request: HttpRequest, slug: str) -> HttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    chosen = request.FILES.get("file")
    if chosen is not None and chosen.size > settings.SYNC_IMPORT_MAX_BYTES:
        # one request could outlast the server's timeout: the same import, as a job
        return _import_in_background(request, batch, chosen)
    upload = receive_upload(
        request,
        lambda file, name: import_items(batch, file, filename=name, actor=Actor.of(request.user)),
        missing="Choose a .jsonl or .csv file to upload.",
    )
    if not upload.accepted:
        return render_batch_page(
            request, batch, problems=upload.problems, upload_name=upload.filename, status=400
        )
    messages.success(request, _imported(dataclasses.asdict(upload.result), upload.filename))
    return redirect("manage-batch", slug=batch.slug)


def _import_in_background(request: HttpRequest, batch: Batch, chosen) -> HttpResponse:
    try:
        job = start_import_job(batch, chosen, request.user)
    except ImportRejected as rejected:
        problems = list(rejected.problems)
    except ServiceError as error:
        problems = [str(error)]
    else:
        if job.state == Job.State.SUCCEEDED:
            messages.success(request, _imported(job.result, chosen.name))
        elif job.state == Job.State.FAILED:
            problems = list((job.result or {}).get("problems") or [job.message])
            return render_batch_page(
                request, batch, problems=problems, upload_name=chosen.name, status=400
            )
        else:
            messages.success(
                request,
                f"{chosen.name} ({chosen.size / 1e6:.1f} MB) is being imported in the "
                "background, all or nothing; this page tells how it ended when you load it "
                "again.",
            )
        return redirect("manage-batch", slug=batch.slug)
    return render_batch_page(request, batch, problems=problems, upload_name=chosen.name, status=400)


def _imported(summary: dict, filename: str) -> str:
    return (
        f"Imported {summary['items_created']} items from {filename} "
        f"({summary['queries_created']} new queries, {summary['responses_created']} new "
        "responses)."
    )


@staff_page(access.can_manage_batches)
@require_http_methods(["GET", "POST"])
def batch_edit(request: HttpRequest, slug: str) -> HttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    form = BatchEditForm.for_batch(batch, request.POST or None)
    if request.method == "POST" and form.is_valid():
        changes = form.changes()
        try:
            if changes:
                batch = batch_services.update_batch(batch, changes, actor=Actor.of(request.user))
        except (ServiceError, ValidationError) as error:
            _show_service_error(form, error)
        else:
            messages.success(
                request,
                f"Saved: {', '.join(_change_label(form, name) for name in changes)}."
                if changes
                else "Nothing changed.",
            )
            return redirect("manage-batch", slug=batch.slug)
    return render(
        request,
        "annotation/staff/batch_form.html",
        {"form": form, "batch": batch, "creating": False, **access.abilities(request.user)},
        status=400 if form.is_bound and form.errors else 200,
    )


def _change_label(form: forms.Form, name: str) -> str:
    if name == "scale_labels":
        return "button texts"
    if name == "kind_settings":
        return f"{form.batch.kind} settings"
    return str(form[name].label)


@staff_page(access.can_view_batches)
@require_GET
def batch_preview(request: HttpRequest, slug: str) -> HttpResponse:
    """The rating page as a worker sees it, for one item; reads only, stores nothing."""
    batch = get_object_or_404(Batch, slug=slug)
    categories = CategoryFilter.from_params(request.GET)
    items = selectors.batch_items(batch, categories).order_by("position", "pk")
    wanted = request.GET.get("item")
    item = items.filter(item_id=wanted).first() if wanted else items.first()
    taxonomy = taxonomy_panel(request, batch.items.all(), categories)
    if item is None:
        if wanted:
            message = f"Batch {batch.slug} has no item {wanted!r}"
            message += f" in {categories.describe()}." if categories.active else "."
        elif categories.active:
            message = f"Batch {batch.slug} has no items in {categories.describe()}."
        else:
            message = f"Batch {batch.slug} has no items yet: upload some to preview them."
        return render(
            request,
            "annotation/staff/preview_missing.html",
            {
                "batch": batch,
                "message": message,
                "taxonomy": taxonomy,
                **access.abilities(request.user),
            },
            status=404 if wanted else 200,
        )
    before = items.filter(position__lt=item.position)
    after = items.filter(position__gt=item.position)
    context = {
        "batch": batch,
        "kind": batch.task_kind,
        "options": batch.task_kind.options(batch),
        "widget": batch.task_kind.widget_config(batch),
        "max_comment_chars": MAX_COMMENT_CHARS,
        "instructions_html": render_markdown(batch.instructions),
        "item": item,
        "item_query": item.query,
        "taxonomy": taxonomy,
        "item_payload": selectors.item_payload(selectors.load_item_for_display(item.pk), batch),
        "index": before.count() + 1,
        "total": items.count(),
        "previous_id": before.order_by("-position", "-pk")
        .values_list("item_id", flat=True)
        .first(),
        "next_id": after.values_list("item_id", flat=True).first(),
    }
    return render(request, "annotation/staff/preview.html", context)


# --------------------------------------------------------------------------- history

HISTORY_SHOWN = 500


@staff_page(access.can_view_batches)
@require_GET
def batch_history(request: HttpRequest, slug: str) -> HttpResponse:
    """Who did what to the batch and when (the audit trail), newest first."""
    batch = get_object_or_404(Batch, slug=slug)
    events = [event_payload(event) for event in history(batch)[:HISTORY_SHOWN]]
    return render(
        request,
        "annotation/staff/history.html",
        {
            "batch": batch,
            "events": events,
            "limit": HISTORY_SHOWN,
            **access.abilities(request.user),
        },
    )


# --------------------------------------------------------------------------- invitations


@staff_page(access.can_manage_batches)
@require_http_methods(["GET", "POST"])
def batch_invitations(request: HttpRequest, slug: str) -> HttpResponse:
    """Signed personal invitation links, downloaded as CSV (invitee, link)."""
    batch = get_object_or_404(Batch, slug=slug)
    problem = ""
    if request.method == "POST":
        try:
            count = int(request.POST.get("count", ""))
            pairs = new_invitations(batch, count, request.POST.get("prefix", "invitee"))
        except (ValueError, InvalidInput) as wrong:
            problem = getattr(wrong, "message", "give a number of links")
        else:
            record(
                "invitations.create",
                subject=batch,
                actor=Actor.of(request.user),
                changes={"count": count, "prefix": request.POST.get("prefix", "invitee")},
            )
            entry = request.build_absolute_uri(reverse("work-entry", args=[batch.slug]))
            response = HttpResponse(content_type="text/csv; charset=utf-8")
            response["Content-Disposition"] = f'attachment; filename="{batch.slug}-invitations.csv"'
            csv_files.write_table(response, *invitation_table(entry, pairs))
            return response
    return render(
        request,
        "annotation/staff/invitations.html",
        {
            "batch": batch,
            "problem": problem,
            "accepted_platforms": " and ".join(
                dict(PLATFORM_CHOICES).get(name, name) for name in batch.accept_platforms
            ),
            **access.abilities(request.user),
        },
        status=400 if problem else 200,
    )
