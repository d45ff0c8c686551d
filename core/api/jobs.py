"""Job status and result download, for every job kind (started by the apps' endpoints).

Who may see a job is decided by its kind's ``can_view`` (``core.jobs.kinds``).
"""

from pathlib import Path

from django.http import FileResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import PermissionDenied
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.shapes import JOB_EXAMPLE, JobResponse, error_responses
from core.errors import Conflict
from core.jobs.execution import job_files_dir
from core.jobs.kinds import can_view_any_job, can_view_job
from core.jobs.queue import start_job
from core.jobs.staleness import fail_stale_jobs
from core.models import Job


class CanSeeJobs(BasePermission):
    def has_permission(self, request, view):
        return can_view_any_job(request.user)


def job_payload(request, job: Job) -> dict:
    """The job as the API shows it; its subject appears under its model's name (``batch``)."""
    payload = {
        "id": str(job.pk),
        "kind": job.kind,
        "state": job.state,
        "progress": job.progress,
        "total": job.total,
        "message": job.message,
        "params": job.params,
        "result": job.result,
        "created_at": job.created_at,
        "finished_at": job.finished_at,
        "status_url": request.build_absolute_uri(reverse("api-job", args=[job.pk])),
        "download_url": None,
    }
    if job.subject_type_id is not None:
        payload[job.subject_type.model] = str(job.subject) if job.subject else None
    if job.state == Job.State.SUCCEEDED and job.result_path:
        payload["download_url"] = request.build_absolute_uri(
            reverse("api-job-download", args=[job.pk])
        )
    return payload


def start_job_response(request, kind: str, subject, params: dict) -> Response:
    """Start a job for an API request and answer ``202`` with the job to poll."""
    return started_job_response(request, start_job(kind, subject, params, request.user))


def started_job_response(request, job: Job) -> Response:
    """Answer ``202`` with a job a service has just started, to poll."""
    job.refresh_from_db()  # an in-process run has finished already
    return Response(job_payload(request, job), status=status.HTTP_202_ACCEPTED)


def _visible_job(request, job_id) -> Job:
    job = get_object_or_404(Job, pk=job_id)
    if not can_view_job(request.user, job.kind):
        raise PermissionDenied("Your role does not include this kind of job.")
    return job


class JobDetailView(APIView):
    permission_classes = [CanSeeJobs]

    @extend_schema(
        tags=["jobs"],
        summary="A job's state and progress",
        description=(
            "Poll this after starting an export, import or analysis job (every answer that "
            "starts one gives this URL as `status_url`). `state` goes pending → running → "
            "succeeded or failed; `progress` of `total` steps; a succeeded export has a "
            "`download_url`, a refused import lists its problems in `result.problems`."
        ),
        responses={200: JobResponse, **error_responses(401, 403, 404)},
        examples=[JOB_EXAMPLE],
    )
    def get(self, request, job_id):
        job = _visible_job(request, job_id)
        if fail_stale_jobs(Job.objects.filter(pk=job.pk)):  # lost: say so, never "pending"
            job.refresh_from_db()
        return Response(job_payload(request, job))


class JobDownloadView(APIView):
    permission_classes = [CanSeeJobs]

    @extend_schema(
        tags=["jobs"],
        summary="Download a job's file",
        description=(
            "The file a succeeded job produced (e.g. a prepared export), as an attachment. "
            "409 while the job has no file yet."
        ),
        responses={
            (200, "application/octet-stream"): OpenApiResponse(
                OpenApiTypes.BINARY, description="The file, as an attachment."
            ),
            **error_responses(401, 403, 404, 409),
        },
    )
    def get(self, request, job_id):
        job = _visible_job(request, job_id)
        if job.state != Job.State.SUCCEEDED or not job.result_path:
            raise Conflict(f"job: {job.pk} has no file to download (state {job.state})")
        path = Path(job.result_path)
        if not path.is_absolute():
            path = job_files_dir() / path
        try:
            stream = open(path, "rb")  # FileResponse closes it
        except FileNotFoundError:  # deleted by the retention sweep since the row was read
            raise Conflict(f"job: {job.pk} has no file to download any more") from None
        return FileResponse(stream, as_attachment=True, filename=path.name)
