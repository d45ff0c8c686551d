"""Crowdworker pages: entry (consent + instructions), the rating page, and their errors.

The rating page is one HTML shell; ``static/annotation/rating.js`` fetches items from the
JSON API so that the next item appears without a page reload.
"""

from django.http import HttpRequest, HttpResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils import timezone
from django.views.decorators.csrf import ensure_csrf_cookie
from django.views.decorators.http import require_GET, require_http_methods

from annotation import worker_session
from annotation.models import Batch, BatchState, Participation
from annotation.rendering import render_markdown
from annotation.services.annotators import identify_annotator, join_batch
from core.errors import InvalidInput

MTURK_PREVIEW = "ASSIGNMENT_ID_NOT_AVAILABLE"

# (platform, parameter holding the worker id, further parameters kept with the entry)
PLATFORM_PARAMETERS = [
    ("prolific", "PROLIFIC_PID", ("STUDY_ID", "SESSION_ID")),
    ("mturk", "workerId", ("assignmentId", "hitId", "turkSubmitTo")),
    ("generic", "worker", ()),
]


class EntryError(Exception):
    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


def identify_entry(params) -> tuple[str, str, dict] | None:
    """(platform, worker id, entry parameters) from the link's query string.

    ``None`` means an MTurk preview (nobody to identify yet). Raises ``EntryError``
    naming the missing parameter.
    """
    if params.get("assignmentId") == MTURK_PREVIEW:
        return None
    for platform, id_param, extra_params in PLATFORM_PARAMETERS:
        if id_param in params:
            worker_id = params.get(id_param, "").strip()
            if not worker_id:
                raise EntryError(f"The link's {id_param} parameter is empty.")
            if platform == "mturk" and not params.get("assignmentId"):
                raise EntryError("The link has workerId but no assignmentId parameter.")
            extras = {name: params.get(name, "") for name in extra_params if name in params}
            return platform, worker_id, extras
    if "STUDY_ID" in params or "SESSION_ID" in params:
        raise EntryError("The link is missing the PROLIFIC_PID parameter.")
    if "hitId" in params or "assignmentId" in params:
        raise EntryError("The link is missing the workerId parameter.")
    raise EntryError(
        "The link is missing the worker id: PROLIFIC_PID (Prolific), workerId (MTurk) "
        "or worker (invitation link)."
    )


def unavailable(request: HttpRequest, batch: Batch | None, message: str, status: int):
    return render(
        request,
        "annotation/unavailable.html",
        {"batch": batch, "message": message},
        status=status,
    )


@require_GET
@ensure_csrf_cookie
def entry(request: HttpRequest, slug: str) -> HttpResponse:
    batch = Batch.objects.filter(slug=slug).first()
    if batch is None:
        return unavailable(request, None, "There is no study at this address.", 404)
    if batch.state != BatchState.LIVE:
        return unavailable(request, batch, _not_live_message(batch), 403)
    try:
        identity = identify_entry(request.GET)
    except EntryError as missing:
        return unavailable(request, batch, missing.message, 400)
    context = {
        "batch": batch,
        "instructions_html": render_markdown(batch.instructions),
        "consent_html": render_markdown(batch.consent_text),
        "preview": identity is None,
    }
    if identity is not None:
        platform, worker_id, extras = identity
        try:
            annotator = identify_annotator(platform, worker_id)
        except InvalidInput as bad:
            return unavailable(request, batch, f"The link's worker id is not valid: {bad}", 400)
        join_batch(batch, annotator, extras)
        worker_session.remember(request.session, batch.slug, annotator.pk)
    return render(request, "annotation/entry.html", context)


@require_http_methods(["POST"])
def consent(request: HttpRequest, slug: str) -> HttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    participation = _participation(request, batch)
    if participation is None:
        return unavailable(request, batch, "Open the study link from your crowd platform.", 403)
    if participation.consented_at is None:
        participation.consented_at = timezone.now()
        participation.save(update_fields=["consented_at"])
    return redirect(reverse("work-task", args=[batch.slug]))


@require_GET
@ensure_csrf_cookie
def task(request: HttpRequest, slug: str) -> HttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    participation = _participation(request, batch)
    if participation is None:
        return unavailable(request, batch, "Open the study link from your crowd platform.", 403)
    if participation.consented_at is None:
        return redirect(reverse("work-entry", args=[batch.slug]))
    return render(
        request,
        "annotation/task.html",
        {
            "batch": batch,
            "kind": batch.task_kind,
            "options": batch.task_kind.options(batch),
            "widget": batch.task_kind.widget_config(batch),
            "instructions_html": render_markdown(batch.instructions),
        },
    )


def _participation(request: HttpRequest, batch: Batch) -> Participation | None:
    annotator_pk = worker_session.annotator_for_batch(request.session, batch.slug)
    if annotator_pk is None:
        return None
    return Participation.objects.filter(batch=batch, annotator_id=annotator_pk).first()


def _not_live_message(batch: Batch) -> str:
    if batch.state == BatchState.DRAFT:
        return "This study has not started yet."
    if batch.state == BatchState.PAUSED:
        return "This study is paused at the moment. Please try again later."
    return "This study is closed and accepts no more answers. Thank you for your interest."
