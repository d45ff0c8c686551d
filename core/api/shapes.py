"""The shapes of the API's common answers, for the OpenAPI schema (``/api/schema/``).

Schema only: views build their answers as plain dicts (``core.api.jobs.job_payload``,
``core.api.errors.exception_handler``); these serializers describe them so the docs show
real fields instead of a free-form object. ``error_responses`` lists the errors an
operation can answer with.
"""

from drf_spectacular.utils import OpenApiExample, OpenApiResponse
from rest_framework import serializers

from core.models import Job


class ErrorResponse(serializers.Serializer):
    """Every error: ``{"detail": ...}``, plus the field at fault and an import's problems."""

    detail = serializers.CharField(help_text="What went wrong, in words a person can act on.")
    field = serializers.CharField(required=False, help_text="The request field at fault.")
    problems = serializers.ListField(
        child=serializers.CharField(),
        required=False,
        help_text="A refused file's problems, each FILE:LINE: field: message.",
    )


ERROR_MEANINGS = {
    400: "Bad input; `field` names the field, `problems` lists a refused file's lines.",
    401: "No credentials: send `Authorization: Token <key>` or log in.",
    403: "Your role does not allow this.",
    404: "No such object.",
    409: "The object's state does not allow this (e.g. a closed batch).",
    413: "Too large for this request; `detail` says which way takes it.",
}


def error_responses(*codes: int) -> dict[int, OpenApiResponse]:
    """``{code: OpenApiResponse(ErrorResponse)}`` for the given status codes."""
    return {
        code: OpenApiResponse(ErrorResponse, description=ERROR_MEANINGS[code]) for code in codes
    }


class JobResponse(serializers.Serializer):
    """A background job (export, import, analysis) as ``/api/v1/jobs/<id>`` shows it."""

    id = serializers.UUIDField()
    kind = serializers.CharField(help_text="export, import, analysis, …")
    state = serializers.ChoiceField(choices=Job.State.choices)
    progress = serializers.IntegerField(help_text="Steps done so far.")
    total = serializers.IntegerField(allow_null=True, help_text="Steps in all, when known.")
    message = serializers.CharField(help_text="Why it failed, or a note; empty otherwise.")
    params = serializers.DictField(help_text="What was asked for (e.g. layout and format).")
    result = serializers.DictField(
        allow_null=True,
        help_text="What it produced (e.g. rows; for a refused import, problems).",
    )
    created_at = serializers.DateTimeField()
    finished_at = serializers.DateTimeField(allow_null=True)
    status_url = serializers.URLField(help_text="Poll this until state is succeeded or failed.")
    download_url = serializers.URLField(
        allow_null=True, help_text="The job's file, once it succeeded with one."
    )
    batch = serializers.CharField(
        required=False, allow_null=True, help_text="The batch the job is about (its slug)."
    )


JOB_EXAMPLE = OpenApiExample(
    "An export job that finished",
    value={
        "id": "0b5a7c2e-3f39-4a51-9d3c-6a1f0e7d2b11",
        "kind": "export",
        "state": "succeeded",
        "progress": 750,
        "total": 750,
        "message": "",
        "params": {"layout": "dense", "format": "parquet", "all_statuses": False},
        "result": {"rows": 750},
        "created_at": "2026-03-01T14:05:00Z",
        "finished_at": "2026-03-01T14:05:02Z",
        "status_url": "https://rate.example.org/api/v1/jobs/0b5a7c2e-3f39-4a51-9d3c-6a1f0e7d2b11",
        "download_url": "https://rate.example.org/api/v1/jobs/0b5a7c2e-3f39-4a51-9d3c-6a1f0e7d2b11/download",
        "batch": "my-study",
    },
    response_only=True,
)
