"""What every API of an analysed subject (a census, a Genie set) does with its analyses:
start one as a job (202 with the job to poll) and answer its newest finished report (404
until there is one). The subject is named in the URL (``<slug:name>``).

A study type's API keeps only what is its own: its permission, its subject model, its
analysis service and the words of its schema (``start_analysis_schema``,
``report_schema``)."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema, extend_schema_view
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from core.api.jobs import start_job_response
from core.errors import NotFound
from core.models import Job


def analysis_request(name: str, default_draws: int, default_seed: int) -> type:
    """A serializer class ``name`` (its schema component's name) of an analysis's settings:
    ``bootstrap``, ``seed`` and an optional ``human_batch`` slug, checked by the service."""
    fields = {
        "bootstrap": serializers.IntegerField(required=False, default=default_draws),
        "seed": serializers.IntegerField(required=False, default=default_seed),
        "human_batch": serializers.CharField(required=False, allow_blank=True, allow_null=True),
    }
    return type(name, (serializers.Serializer,), fields)


def start_analysis_schema(tag: str, summary: str, description: str, request: type):
    """The schema of a ``StartAnalysisView`` subclass (a class decorator)."""
    return extend_schema_view(
        post=extend_schema(
            tags=[tag],
            summary=summary,
            description=description,
            request=request,
            responses={202: dict},
        )
    )


def report_schema(tag: str, summary: str, description: str):
    """The schema of a ``ReportView`` subclass (a class decorator)."""
    return extend_schema_view(
        get=extend_schema(tags=[tag], summary=summary, description=description, responses=dict)
    )


class SubjectAnalysisView(APIView):
    """Base of the views about one subject's analyses."""

    subject_model = None  # a model with a unique ``name``
    subject_label = ""  # the subject in a 404's message: "census", "genie"
    # The analysis service module: ``JOB_KIND``, ``analysis_params(**settings)`` and
    # ``latest_report(subject)``.
    analyses = None

    def subject(self, name: str):
        return get_object_or_404(self.subject_model, name=name)

    def report(self, name: str) -> dict:
        """The newest finished report of the subject ``name``, or a 404 saying to start one."""
        found: tuple[Job, dict] | None = self.analyses.latest_report(self.subject(name))
        if found is None:
            raise NotFound(
                f"{self.subject_label}: {name} has no finished analysis yet; start one first"
            )
        return found[1]


class StartAnalysisView(SubjectAnalysisView):
    """Start an analysis job; poll ``status_url``, then fetch the report."""

    settings_serializer = None  # made by ``analysis_request``

    def post(self, request, name: str):
        subject = self.subject(name)
        settings = self.settings_serializer(data=request.data)
        settings.is_valid(raise_exception=True)
        params = self.analyses.analysis_params(**settings.validated_data)
        return start_job_response(request, self.analyses.JOB_KIND, subject, params)


class ReportView(SubjectAnalysisView):
    """The newest finished report of the subject."""

    def get(self, request, name: str):
        return Response(self.report(name))
