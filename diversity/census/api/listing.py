"""The census API (API.md, "One-Word Census"): list and import censuses. Its analyses and
reports are every study type's (``core.jobs.study_api``)."""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from core.audit import Actor
from core.errors import InvalidInput
from diversity.census import selectors
from diversity.census.access import CanImportCensus
from diversity.census.services.imports import CensusUpload, import_census


class CensusUploadRequest(serializers.Serializer):
    name = serializers.CharField(help_text="lower-case letters, digits and hyphens")
    files = serializers.ListField(
        child=serializers.FileField(),
        help_text="transcript .json files (one per model) and/or flat .jsonl/.csv files",
    )
    norms = serializers.FileField(required=False, help_text="human norms (.json)")
    description = serializers.CharField(required=False)


CENSUS_SUMMARY_FIELDS = {
    "name": serializers.CharField(),
    "description": serializers.CharField(),
    "created_at": serializers.DateTimeField(),
    "n_replies": serializers.IntegerField(),
    "n_models": serializers.IntegerField(),
    "n_categories": serializers.IntegerField(),
    "has_norms": serializers.BooleanField(),
    "analysed_at": serializers.DateTimeField(allow_null=True),
    "files": serializers.ListField(child=serializers.DictField()),
}
CensusSummary = inline_serializer("CensusSummary", fields=CENSUS_SUMMARY_FIELDS)
CensusSummaryList = inline_serializer("CensusSummary", fields=CENSUS_SUMMARY_FIELDS, many=True)


def census_payload(row: dict) -> dict:
    census = row["census"]
    return {
        "name": census.name,
        "description": census.description,
        "created_at": census.created_at,
        "n_replies": row["n_replies"],
        "n_models": row["n_models"],
        "n_categories": row["n_categories"],
        "has_norms": row["has_norms"],
        "analysed_at": row["analysed_at"],
        "files": [
            {
                "name": f.name,
                "role": f.role,
                "bytes": f.size_bytes,
                "sha256": f.sha256,
                "rows": f.n_rows,
            }
            for f in census.files.all()
        ],
    }


class CensusListView(APIView):
    """List censuses; import one (multipart ``name``, ``files``, optional ``norms``)."""

    permission_classes = [CanImportCensus]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        tags=["census"],
        summary="List censuses",
        description="Every One-Word Census with its size, whether it has human norms, its "
        "imported files (size, SHA-256) and when it was last analysed.",
        responses=CensusSummaryList,
    )
    def get(self, request):
        return Response([census_payload(row) for row in selectors.census_rows()])

    @extend_schema(
        tags=["census"],
        summary="Import a census",
        description="Model replies from transcript JSON files and/or flat JSONL/CSV files "
        "(`files`, one or more) and optional human norms (`norms`), all or nothing: 400 with "
        "every problem in `problems` (FORMATS.md, One-Word Census).",
        request={"multipart/form-data": CensusUploadRequest},
        responses={201: CensusSummary},
    )
    def post(self, request):
        uploads = request.FILES.getlist("files")
        if not uploads:
            raise InvalidInput("files", "attach one or more reply files as 'files' (multipart)")
        norms = request.FILES.get("norms")
        census = import_census(
            request.data.get("name", ""),
            [CensusUpload(upload, upload.name) for upload in uploads],
            norms=CensusUpload(norms, norms.name) if norms else None,
            description=request.data.get("description", "") or "",
            actor=Actor.of(request.user),
        )
        row = next(row for row in selectors.census_rows() if row["census"].pk == census.pk)
        return Response(census_payload(row), status=status.HTTP_201_CREATED)
