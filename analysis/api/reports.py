"""Start an analysis job and fetch the report (API.md, "Researcher and admin API")."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis.access import CanAnalyse
from analysis.services.analyses import DEFAULT_RESAMPLES, latest_report, validate_settings
from annotation.models import Batch
from core.api.jobs import start_job_response
from core.errors import NotFound


class AnalysisRequest(serializers.Serializer):
    bootstrap = serializers.IntegerField(required=False, default=DEFAULT_RESAMPLES)
    seed = serializers.IntegerField(required=False, default=0)


class StartAnalysisView(APIView):
    """Start an analysis job; poll ``status_url`` and fetch the report when it succeeded."""

    permission_classes = [CanAnalyse]

    @extend_schema(request=AnalysisRequest, responses={202: dict})
    def post(self, request, slug: str):
        batch = get_object_or_404(Batch, slug=slug)
        settings = AnalysisRequest(data=request.data)
        settings.is_valid(raise_exception=True)
        bootstrap, seed = validate_settings(
            settings.validated_data["bootstrap"], settings.validated_data["seed"]
        )
        params = {"bootstrap": bootstrap, "seed": seed}
        return start_job_response(request, "analysis", batch, params)


class LatestReportView(APIView):
    """The newest finished report of the batch (the JSON of ANALYSIS.md)."""

    permission_classes = [CanAnalyse]

    @extend_schema(responses=dict)
    def get(self, request, slug: str):
        batch = get_object_or_404(Batch, slug=slug)
        found = latest_report(batch)
        if found is None:
            raise NotFound(f"batch: {slug} has no finished analysis yet; start one first")
        return Response(found[1])
