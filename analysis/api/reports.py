"""Start an analysis job and fetch the report (API.md, "Researcher and admin API")."""

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis.access import CanAnalyse
from analysis.api.responses import REPORT_EXAMPLE, ReportResponse
from analysis.presentation import filtered_report
from analysis.services.analyses import (
    DEFAULT_RESAMPLES,
    JOB_KIND,
    latest_report,
    require_ratings_kind,
    validate_group_by,
    validate_settings,
)
from annotation.api.staff import CATEGORY_PARAMETERS
from annotation.models import Batch
from annotation.selectors import CategoryFilter
from core.api.shapes import JOB_EXAMPLE, JobResponse, error_responses
from core.errors import NotFound
from core.jobs.study_api import start_analysis


class BatchAnalysisRequest(serializers.Serializer):
    """The settings of a batch's analysis (the page's "Run analysis" form)."""

    bootstrap = serializers.IntegerField(
        required=False,
        default=DEFAULT_RESAMPLES,
        help_text="Bootstrap resamples for the 95 % intervals; 0 skips them.",
    )
    seed = serializers.IntegerField(
        required=False, default=0, help_text="Same seed, same intervals."
    )
    group_by = serializers.CharField(
        required=False,
        allow_blank=True,
        default="",
        help_text="A choice question of the batch's questionnaire to break figures down by.",
    )


class StartAnalysisView(APIView):
    """Start an analysis job; poll ``status_url`` and fetch the report when it succeeded."""

    permission_classes = [CanAnalyse]

    @extend_schema(
        tags=["analyses"],
        summary="Start an analysis",
        description=(
            "Runs the analysis of ANALYSIS.md on the batch's counted labels and the scores "
            "imported so far, as a job: answers 202 with the job; poll its `status_url`, "
            "then read `GET …/report`."
        ),
        request=BatchAnalysisRequest,
        responses={202: JobResponse, **error_responses(400, 401, 403, 404)},
        examples=[JOB_EXAMPLE],
    )
    def post(self, request, slug: str):
        batch = get_object_or_404(Batch, slug=slug)

        def params(bootstrap, seed, group_by) -> dict:
            require_ratings_kind(batch)
            bootstrap, seed = validate_settings(bootstrap, seed)
            return {
                "bootstrap": bootstrap,
                "seed": seed,
                "group_by": validate_group_by(batch, group_by),
            }

        # the same start as every study type's: an unknown setting is refused, naming it
        return start_analysis(request, batch, BatchAnalysisRequest, params, JOB_KIND)


class LatestReportView(APIView):
    """The newest finished report of the batch (the JSON of ANALYSIS.md)."""

    permission_classes = [CanAnalyse]

    @extend_schema(
        tags=["analyses"],
        summary="The newest analysis report",
        description=(
            "The report of the newest finished analysis (ANALYSIS.md, Report): per-item "
            "figures, subsets, model–human correlations, agreement, annotators. With "
            "`category` (and/or `subcategory`), `items` and `by_category` hold that "
            "category's entries only, as on the report page; the other figures stay the "
            "whole batch's. 404 until an analysis has finished."
        ),
        parameters=CATEGORY_PARAMETERS,
        responses={200: ReportResponse, **error_responses(400, 401, 403, 404)},
        examples=[REPORT_EXAMPLE],
    )
    def get(self, request, slug: str):
        batch = get_object_or_404(Batch, slug=slug)
        categories = CategoryFilter.from_params(request.query_params)
        found = latest_report(batch)
        if found is None:
            raise NotFound(f"batch: {slug} has no finished analysis yet; start one first")
        return Response(filtered_report(found[1], categories.category, categories.subcategory))
