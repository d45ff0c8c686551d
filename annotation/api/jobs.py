"""Job status and result download (export/analysis jobs started elsewhere)."""

from pathlib import Path

from django.http import FileResponse
from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import extend_schema
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import roles
from annotation.models import Job
from annotation.services.errors import Conflict
from annotation.services.jobs import job_files_dir


class CanSeeJobs(BasePermission):
    def has_permission(self, request, view):
        return roles.can_export(request.user) or roles.can_analyse(request.user)


def job_payload(request, job: Job) -> dict:
    payload = {
        "id": str(job.pk),
        "kind": job.kind,
        "batch": job.batch.slug,
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
    if job.state == Job.State.SUCCEEDED and job.result_path:
        payload["download_url"] = request.build_absolute_uri(
            reverse("api-job-download", args=[job.pk])
        )
    return payload


class JobDetailView(APIView):
    permission_classes = [CanSeeJobs]

    @extend_schema(responses=dict)
    def get(self, request, job_id):
        job = get_object_or_404(Job.objects.select_related("batch"), pk=job_id)
        return Response(job_payload(request, job))


class JobDownloadView(APIView):
    permission_classes = [CanSeeJobs]

    @extend_schema(responses={(200, "application/octet-stream"): bytes})
    def get(self, request, job_id):
        job = get_object_or_404(Job, pk=job_id)
        if job.state != Job.State.SUCCEEDED or not job.result_path:
            raise Conflict(f"job: {job.pk} has no file to download (state {job.state})")
        path = Path(job.result_path)
        if not path.is_absolute():
            path = job_files_dir() / path
        return FileResponse(open(path, "rb"), as_attachment=True, filename=path.name)
