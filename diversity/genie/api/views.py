"""The Genie API (API.md, "Genie"): list and import sets, compare two models or methods of
the newest report, its scores in GENIE's shape. Its analyses and reports are every study
type's (``core.jobs.study_api``)."""

from django.http import StreamingHttpResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.audit import Actor
from core.errors import InvalidInput
from core.jobs.study_api import SubjectAnalysisView
from diversity.genie import selectors
from diversity.genie.access import CanAnalyseGenie, CanImportGenie
from diversity.genie.choice import check_choice, compared
from diversity.genie.core import exports
from diversity.genie.services.imports import companion_files, import_genie
from diversity.genie.study import GENIE


class GenieUploadRequest(serializers.Serializer):
    name = serializers.CharField(help_text="lower-case letters, digits and hyphens")
    file = serializers.FileField(
        help_text="judgments as .jsonl, .json or .csv, the platform's layout or GENIE's "
        "(FORMATS.md, 'Genie')"
    )
    population = serializers.FileField(
        required=False, help_text="GENIE: the population's answers file"
    )
    questions = serializers.FileField(required=False, help_text="GENIE's questions file")
    model_map = serializers.FileField(
        required=False, help_text='{"NAME": {"model": ..., "method": ...}} (JSON)'
    )
    description = serializers.CharField(required=False)


GENIE_SUMMARY_FIELDS = {
    "name": serializers.CharField(),
    "description": serializers.CharField(),
    "created_at": serializers.DateTimeField(),
    "file": serializers.DictField(),
    "n_judgments": serializers.IntegerField(),
    "n_llm": serializers.IntegerField(),
    "n_human": serializers.IntegerField(),
    "layout": serializers.CharField(help_text="platform, genie-similarity or genie-answers"),
    "left_out": serializers.DictField(
        child=serializers.IntegerField(), help_text="pairs left out of the scores, by reason"
    ),
    "repeated_pairs": serializers.IntegerField(
        help_text="rows of GENIE's similarity file judging a pair judged before (kept)"
    ),
    "human_batch": serializers.CharField(allow_null=True),
    "analysed_at": serializers.DateTimeField(allow_null=True),
}
GenieSummary = inline_serializer("GenieSummary", fields=GENIE_SUMMARY_FIELDS)
GenieSummaryList = inline_serializer("GenieSummary", fields=GENIE_SUMMARY_FIELDS, many=True)


def genie_payload(row: dict) -> dict:
    genie_set = row["genie_set"]
    return {
        "name": genie_set.name,
        "description": genie_set.description,
        "created_at": genie_set.created_at,
        "file": {
            "name": genie_set.file_name,
            "bytes": genie_set.file_bytes,
            "sha256": genie_set.file_sha256,
        },
        "n_judgments": row["n_judgments"],
        "n_llm": row["n_llm"],
        "n_human": row["n_human"],
        "layout": genie_set.layout,
        "left_out": genie_set.left_out,
        "repeated_pairs": genie_set.repeated_pairs,
        "human_batch": genie_set.human_batch.slug if genie_set.human_batch else None,
        "analysed_at": row["analysed_at"],
    }


class GenieListView(APIView):
    """List Genie sets; import one (multipart ``name``, ``file``, optional ``description``)."""

    permission_classes = [CanImportGenie]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        tags=["genie"],
        summary="List Genie sets",
        description="Every Genie set with its file (size, SHA-256), its judgments by source, "
        "its similarity batch and when it was last analysed.",
        responses=GenieSummaryList,
    )
    def get(self, request):
        return Response([genie_payload(row) for row in selectors.genie_rows()])

    @extend_schema(
        tags=["genie"],
        summary="Import a Genie set",
        description="Similarity judgments from a JSONL or CSV file (`file`), all or nothing: "
        "400 with every `FILE:LINE: field: message` in `problems` (FORMATS.md, Genie).",
        request={"multipart/form-data": GenieUploadRequest},
        responses={201: GenieSummary},
    )
    def post(self, request):
        upload = request.FILES.get("file")
        if upload is None:
            raise InvalidInput("file", "attach the judgments file as 'file' (multipart)")
        genie_set = import_genie(
            request.data.get("name", ""),
            upload,
            filename=upload.name,
            description=request.data.get("description", "") or "",
            actor=Actor.of(request.user),
            **companion_files(request.FILES),
        )
        row = next(row for row in selectors.genie_rows() if row["genie_set"].pk == genie_set.pk)
        return Response(genie_payload(row), status=status.HTTP_201_CREATED)


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
        records = records_of(report, request.query_params.get("source", "llm"))
        response = StreamingHttpResponse(
            exports.jsonl_lines(records), content_type="application/x-ndjson; charset=utf-8"
        )
        response["Content-Disposition"] = f'attachment; filename="{name}-{self.table}.jsonl"'
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
