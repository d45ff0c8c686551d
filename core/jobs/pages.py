"""What every staff page that runs a job does with its "Run" form: start the job and
answer the page's script (JSON: 202 with the job's status, or 400 with the problem) or,
without the script, a message and a redirect back to the page, which then follows the
job's progress (``static/analysis/report.js``)."""

from collections.abc import Callable

from django import forms
from django.contrib import messages
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.shortcuts import redirect
from django.urls import reverse

from core.errors import ServiceError
from core.jobs.queue import start_job
from core.models import Job


def job_status(job: Job) -> dict:
    """A job as the pages' script polls it (the API's job answer, in short)."""
    return {
        "id": str(job.pk),
        "state": job.state,
        "progress": job.progress,
        "total": job.total,
        "message": job.message,
        "status_url": reverse("api-job", args=[job.pk]),
    }


def wants_json(request: HttpRequest) -> bool:
    """The page's script asks for JSON; a plain form post for HTML."""
    return "application/json" in request.headers.get("Accept", "")


def form_problems(form: forms.Form) -> str:
    """A refused form's errors on one line, each after its field's label."""
    return "; ".join(
        f"{form[field].label}: {' '.join(errors)}" if field in form.fields else " ".join(errors)
        for field, errors in form.errors.items()
    )


def start_job_from_page(
    request: HttpRequest,
    kind: str,
    subject,
    form: forms.Form,
    params: Callable[[dict], dict],
    *,
    back_to: str,
    finished: str,
) -> HttpResponse:
    """Start a ``kind`` job on ``subject`` with ``params(form.cleaned_data)`` (which may
    refuse with a ``ServiceError``); ``back_to`` is the page's URL, ``finished`` the
    message when the job ran at once (no broker) and succeeded."""
    try:
        if not form.is_valid():
            raise ServiceError(form_problems(form))
        job = start_job(kind, subject, params(form.cleaned_data), request.user)
    except ServiceError as error:
        if wants_json(request):
            return JsonResponse({"error": str(error)}, status=400)
        messages.error(request, f"Analysis not started — {error}")
        return redirect(back_to)
    job.refresh_from_db()
    if wants_json(request):
        return JsonResponse(job_status(job), status=202)
    if job.state == Job.State.SUCCEEDED:
        messages.success(request, finished)
    elif job.state == Job.State.FAILED:
        messages.error(request, f"Analysis failed: {job.message}")
    else:
        messages.success(request, "Analysis started; this page follows its progress.")
    return redirect(back_to)
