"""The Genie API (API.md, "Genie"): compare two models or methods of the newest report, its
scores in GENIE's shape. Its list and import are ``api.listing``'s, its analyses and reports
every study type's (``core.jobs.study_api``)."""

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.response import Response

from core.jobs.study_api import SubjectAnalysisView
from diversity.genie.access import CanAnalyseGenie
from diversity.genie.choice import check_choice, check_source, compared
from diversity.genie.core import exports
from diversity.genie.study import GENIE


class GenieExportView(SubjectAnalysisView):
    """The newest report's scores in GENIE's own shape (``genie.jsonl``, ``q_genie.jsonl``)."""

    study = GENIE
    permission_classes = [CanAnalyseGenie]
    table = "genie"

    @extend_schema(
        tags=["genie"],
        summary="Genie scores in GENIE's shape",
        description="JSON lines as GENIE's compute_genie writes them: genie.jsonl (Prompt, "
        "DocID_1, Model_1, Feature, GENIE) or q_genie.jsonl (… Question, Answer_1, Feature, "
        "Q_GENIE); `?source=human` for the human scores. 404 until an analysis has finished.",
        responses={(200, "application/x-ndjson"): str},
    )
    def get(self, request, name: str):
        report = self.report(name)
        records_of = exports.genie_records if self.table == "genie" else exports.q_genie_records
        # a source without scores is a 400 naming it (as for the comparison), not an
        # empty file
        source = check_source(report, request.query_params.get("source", "llm"))
        records = records_of(report, source)
        response = StreamingHttpResponse(
            exports.jsonl_lines(records), content_type="application/x-ndjson; charset=utf-8"
        )
        suffix = "" if source == "llm" else f"-{source}"  # the human scores' file apart
        response["Content-Disposition"] = (
            f'attachment; filename="{name}-{self.table}{suffix}.jsonl"'
        )
        return response


COMPARISON_PARAMETERS = [
    OpenApiParameter("by", str, description="model or method", required=True),
    OpenApiParameter("first", str, description="a model (or method) of the report", required=True),
    OpenApiParameter("second", str, description="another one, subtracted", required=True),
    OpenApiParameter("source", str, description="llm (default) or human"),
]


class GenieComparisonView(SubjectAnalysisView):
    """The difference of two chosen models or two chosen methods of the newest report."""

    study = GENIE
    permission_classes = [CanAnalyseGenie]

    @extend_schema(
        tags=["genie"],
        summary="Compare two models or two methods",
        description="From the newest report: each group's mean novelty per feature and over "
        "all features (`(all features)`), and `first` − `second` with its interval and paired "
        "permutation p over prompts (ANALYSIS.md, Genie, 'Models and methods'), computed with "
        "the report's bootstrap settings. 400 naming the parameter when a group is not of the "
        "report; 404 until an analysis has finished.",
        parameters=COMPARISON_PARAMETERS,
        responses={200: OpenApiTypes.OBJECT},
    )
    def get(self, request, name: str):
        report = self.report(name)
        params = request.query_params
        choice = check_choice(
            report,
            params.get("source", "llm"),
            params.get("by", ""),
            params.get("first", ""),
            params.get("second", ""),
        )
        return Response(compared(report, choice))
