"""The staff pages' shared parts: the batch overview page, the category filter every
staff page shows (``taxonomy_panel``), and what the annotation app registers in
``core.extensions`` (the main navigation and the batch tabs).

Other apps render the batch page again through ``render_batch_page`` (e.g. after a refused
upload in their own panel) and add tabs, panels and columns through ``core.extensions``.
"""

from urllib.parse import urlencode

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import timezone

from annotation import access, selectors, settings_spec
from annotation.models import Batch, BatchState
from annotation.rendering import render_markdown
from annotation.selectors import CategoryFilter
from annotation.services import batches as batch_services
from annotation.services.exports import lewidi
from annotation.services.import_jobs import newest_background_import
from core.extensions import NavLink, Tab, register_nav, register_tab

# (layout, extra parameters, name, description) of the export rows on the batch page
EXPORT_LAYOUTS = [
    ("long", {}, "Labels", "one row per counted label"),
    (
        "long",
        {"all_statuses": "1"},
        "Labels, every status",
        "also surplus, excluded, attention-check and repeat labels (see status)",
    ),
    ("dense", {}, "Items", "one row per item with its list of labels"),
    ("annotators", {}, "Annotators", "one row per annotator who contributed"),
    (
        "bundles",
        {},
        "Bundles",
        "one row per annotator and bundle, their labels in item order (bundled batches)",
    ),
]
EXPORT_FORMATS = ["jsonl", "csv", "parquet"]
# Prolific replaces the {{%…%}} placeholders of a study URL with each participant's ids.
PROLIFIC_PARAMETERS = (
    "?PROLIFIC_PID={{%PROLIFIC_PID%}}&STUDY_ID={{%STUDY_ID%}}&SESSION_ID={{%SESSION_ID%}}"
)

# What the button that moves a batch into a state says, and what confirm() asks.
STATE_ACTIONS = {
    BatchState.LIVE: (
        "Publish",
        "Publish this batch? Anyone with a worker link can start rating.",
    ),
    BatchState.PAUSED: (
        "Pause",
        "Pause this batch? Workers get no new items until you resume it; "
        "answers to items already handed out are still accepted.",
    ),
    BatchState.CLOSED: (
        "Close",
        "Close this batch for good? Workers get no more items and it cannot be reopened.",
    ),
}
RESUME = ("Resume", "Resume this batch? Workers with the link can continue rating.")

# The live panel's status line: what the batch's state means for the figures.
LIVE_STATUS = {
    BatchState.DRAFT: "Draft: not published, workers are turned away",
    BatchState.LIVE: "Live: workers get items",
    BatchState.PAUSED: "Paused: workers get no new items",
    BatchState.CLOSED: "Closed: workers get no more items",
}


def _worker_links(request: HttpRequest, batch: Batch) -> list[dict]:
    entry = request.build_absolute_uri(reverse("work-entry", args=[batch.slug]))
    return [
        {
            "name": "Prolific",
            "url": entry + PROLIFIC_PARAMETERS,
            "note": "The study URL: Prolific fills in the three placeholders.",
        },
        {
            "name": "MTurk",
            "url": entry,
            "note": (
                "The ExternalQuestion URL: MTurk appends "
                "?workerId=…&assignmentId=…&hitId=… itself (a HIT preview shows the "
                "instructions and hands out nothing)."
            ),
        },
        {
            "name": "Invitation",
            "url": entry + "?worker=",
            "note": "Append a different id for each person, e.g. …?worker=alice.",
        },
    ]


def _export_links(batch: Batch, categories: CategoryFilter) -> dict:
    base = reverse("api-batch-export", args=[batch.slug])
    only = categories.params()
    return {
        "layouts": [
            {
                "layout": layout + ("-all" if extra else ""),
                "name": name,
                "description": description,
                "links": [
                    (
                        fmt,
                        f"{base}?{urlencode({'layout': layout, 'format': fmt, **extra, **only})}",
                    )
                    for fmt in EXPORT_FORMATS
                ],
            }
            for layout, extra, name, description in EXPORT_LAYOUTS
        ],
        "card": f"{base}?{urlencode({'layout': 'card', **only})}",
        # only for kinds with a fixed label set (the layout's soft labels need one)
        "lewidi": f"{base}?{urlencode({'layout': 'lewidi', **only})}"
        if lewidi.applies(batch)
        else None,
        "job_url": reverse("api-export-jobs", args=[batch.slug]) + categories.query_string(),
    }


def taxonomy_panel(request: HttpRequest, items, categories: CategoryFilter) -> dict | None:
    """What ``annotation/staff/category_filter.html`` shows: the filter in force and the
    items and counted labels per category of ``items`` (an ``Item`` queryset, unfiltered),
    each category and sub-category a link that narrows the current page to it. ``None``
    when there is nothing to show (no item has a category, and no filter is asked for)."""
    rows = selectors.category_counts(items)
    if not categories.active and not any(row["category"] for row in rows):
        return None
    base = request.path
    for row in rows:
        here = CategoryFilter(category=row["category"] or None)
        row["url"] = base + here.query_string() if row["category"] else ""
        row["current"] = categories.active and categories == here
        for sub in row["subcategories"]:
            here = CategoryFilter(row["category"] or None, sub["subcategory"] or None)
            sub["url"] = base + here.query_string() if row["category"] else ""
            sub["current"] = categories.subcategory is not None and categories == here
    matched = any(
        categories.matches(row["category"], sub["subcategory"])
        for row in rows
        for sub in row["subcategories"] or [{"subcategory": ""}]
    )
    return {
        "filter": categories,
        "rows": rows,
        "clear_url": base,
        "matched": matched,
        "open": categories.active,
    }


def _state_actions(batch: Batch) -> list[dict]:
    actions = []
    for state in (BatchState.LIVE, BatchState.PAUSED, BatchState.CLOSED):
        if state not in batch_services.TRANSITIONS[batch.state]:
            continue
        label, question = (
            RESUME
            if state == BatchState.LIVE and batch.state == BatchState.PAUSED
            else STATE_ACTIONS[state]
        )
        actions.append({"state": state, "label": label, "confirm": question})
    return actions


def render_batch_page(
    request: HttpRequest,
    batch: Batch,
    *,
    problems=None,
    upload_name="",
    upload_subject="items",
    panel_state: dict | None = None,
    status=200,
) -> HttpResponse:
    """The batch's overview page. ``problems`` lists a refused upload's lines (of the
    ``upload_subject`` file: items, or another app's, e.g. model scores), shown first on
    the page; ``panel_state`` is what another app's panel wants shown. ``?category=`` and
    ``?subcategory=`` narrow the figures and the export links to those items."""
    categories = CategoryFilter.from_params(request.GET)
    figures = selectors.batch_dashboard(batch, categories)
    context = {
        "batch": batch,
        "figures": figures,
        "figures_at": timezone.now(),
        "live_status": LIVE_STATUS.get(batch.state, batch.get_state_display()),
        "live_status_texts": {str(state): text for state, text in LIVE_STATUS.items()},
        "percent_done": round(100 * figures["share_done"], 1),
        "progress_url": reverse("api-batch-progress", args=[batch.slug])
        + categories.query_string(),
        "worker_links": _worker_links(request, batch),
        "exports": _export_links(batch, categories),
        "taxonomy": taxonomy_panel(request, batch.items.all(), categories),
        "state_actions": _state_actions(batch),
        "design": settings_spec.design_summary(batch),
        "n_checks": batch.items.filter(is_check=True).count(),
        "instructions_html": render_markdown(batch.instructions),
        "consent_html": render_markdown(batch.consent_text),
        "background_import": newest_background_import(batch),
        "sync_import_limit_mb": round(settings.SYNC_IMPORT_MAX_BYTES / 1e6, 1),
        "problems": problems or [],
        "upload_name": upload_name,
        "upload_subject": upload_subject,
        "panel_state": panel_state or {},
        **access.abilities(request.user),
    }
    return render(request, "annotation/staff/batch_detail.html", context, status=status)


def register_extensions() -> None:
    """The staff site's "Batches" entry and the tabs of every batch page."""
    register_nav(NavLink("Batches", "manage-batches", access.can_view_batches, order=10))
    for tab in (
        Tab("Overview", "manage-batch", order=10),
        Tab("Annotators", "manage-annotators", order=20),
        Tab("Preview as a worker", "manage-batch-preview", order=30),
        Tab("Invitations", "manage-batch-invitations", access.can_manage_batches, order=70),
        Tab("History", "manage-batch-history", order=80),
        Tab("Edit", "manage-batch-edit", access.can_manage_batches, order=90),
    ):
        register_tab("batch", tab)
