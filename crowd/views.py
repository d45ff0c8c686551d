"""The crowd app's pages and the Prolific webhook.

* ``POST /hooks/prolific/`` — Prolific's webhook (``services.webhooks``): JSON answers,
  CSRF-exempt (it is authenticated by its signature), never a 500;
* ``/manage/<slug>/review`` — the Review tab: the proposed action for every submission
  awaiting review (researchers read it), and "Apply" for admins.
"""

import logging

from django.conf import settings
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_http_methods

from annotation.models import Batch
from core.access import staff_page
from core.audit import Actor
from crowd import access
from crowd.models import Platform, PlatformSubmission, ReviewAction, WebhookEvent
from crowd.services.prolific_client import Ambiguous, NotConfigured, ProlificClient, ProlificError
from crowd.services.review import apply_prolific, propose
from crowd.services.webhooks import receive_prolific

logger = logging.getLogger(__name__)


@csrf_exempt
def prolific_webhook(request: HttpRequest) -> JsonResponse:
    if request.method != "POST":
        return JsonResponse({"detail": "Send webhook events with POST."}, status=405)
    try:
        reply = receive_prolific(request.body, request.headers)
    except Exception:  # answered so that Prolific delivers the event again later
        logger.exception("Prolific webhook could not be handled")
        response = JsonResponse({"detail": "Not handled now; send it again."}, status=503)
        response["Retry-After"] = "30"
        return response
    return JsonResponse(reply.payload, status=reply.status)


@staff_page(access.can_view_review)
@require_http_methods(["GET", "POST"])
def review_page(request: HttpRequest, slug: str) -> HttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    reject = request.POST.get("reject_failed_checks") == "on" or request.GET.get("reject") == "1"
    if request.method == "POST":
        if not access.can_act(request.user):
            return render(request, "core/forbidden.html", status=403)
        if not batch.prolific_study_id:
            messages.error(request, "This batch has no Prolific study id: set it on the Edit tab.")
        else:
            try:
                outcome = apply_prolific(
                    batch,
                    ProlificClient(),
                    actor=Actor.of(request.user),
                    reject_failed_checks=reject,
                )
            except (NotConfigured, ProlificError, Ambiguous) as failed:
                messages.error(request, str(failed))
            else:
                messages.success(request, _summary(outcome))
        return redirect("manage-batch-review", slug=batch.slug)
    proposals = propose(batch, Platform.PROLIFIC, reject_failed_checks=reject)
    proposals += propose(batch, Platform.MTURK, reject_failed_checks=reject)
    counts = {}
    for proposal in proposals:
        counts[proposal.action] = counts.get(proposal.action, 0) + 1
    return render(
        request,
        "crowd/review.html",
        {
            "batch": batch,
            "proposals": proposals,
            "counts": [(ReviewAction(a).label, n) for a, n in sorted(counts.items())],
            "reject_failed_checks": reject,
            "can_act": access.can_act(request.user),
            "configured": bool(settings.PROLIFIC_API_TOKEN),
            "synced": PlatformSubmission.objects.filter(batch=batch).order_by("-synced_at").first(),
            "refused_webhooks": WebhookEvent.objects.filter(
                outcome__in=[WebhookEvent.Outcome.BAD_SIGNATURE, WebhookEvent.Outcome.STALE]
            ).count(),
        },
    )


def _summary(outcome: dict) -> str:
    text = (
        f"Approved {outcome['approved']}, screened out {outcome['screened_out']}, "
        f"rejected {outcome['rejected']}."
    )
    if outcome["refused"]:
        text += f" Prolific refused {outcome['refused']} (see History)."
    if outcome["unknown"]:
        text += f" {outcome['unknown']} got no answer: the next sync settles them."
    return text
