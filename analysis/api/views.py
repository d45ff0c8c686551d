"""Researcher and admin API of the analysis app: model scores (API.md, FORMATS.md)."""

import dataclasses

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiExample, extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from analysis import selectors
from analysis.access import CanAnalyse
from analysis.models import ScoreKind
from analysis.services.scores import import_scores
from annotation.models import Batch
from core.api.shapes import error_responses
from core.audit import Actor
from core.errors import InvalidInput


class ScoreUpload(serializers.Serializer):
    file = serializers.FileField(help_text="Scores as .jsonl or .csv (FORMATS.md, 'Model scores')")
    batch = serializers.SlugField(
        required=False, help_text="The batch whose items the item_id values name"
    )


ScoreImportResult = inline_serializer(
    "ScoreImportResult",
    fields={
        "sources_created": serializers.IntegerField(),
        "sources_updated": serializers.IntegerField(),
        "scores_created": serializers.IntegerField(),
        "scores_unchanged": serializers.IntegerField(),
    },
)

ImportProblems = inline_serializer(
    "ImportProblems",
    fields={
        "detail": serializers.CharField(),
        "problems": serializers.ListField(
            child=serializers.CharField(), help_text="FILE:LINE: field: message"
        ),
    },
)

SourceCoverageList = inline_serializer(
    "SourceCoverage",
    many=True,
    fields={
        "source": serializers.CharField(),
        "kind": serializers.ChoiceField(choices=ScoreKind.choices),
        "n_items_scored": serializers.IntegerField(),
        "n_items": serializers.IntegerField(),
        "coverage": serializers.FloatField(),
    },
)


class ScoreImportView(APIView):
    """Import model scores; all-or-nothing, 400 with every ``FILE:LINE: field: message``."""

    permission_classes = [CanAnalyse]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        tags=["scores"],
        summary="Import model scores",
        description=(
            "A .jsonl or .csv file of scores (FORMATS.md, Model scores) as multipart `file`, "
            "keyed by `response_id` or by `item_id` (then name the `batch`). All or nothing: "
            "400 with every `FILE:LINE: field: message` in `problems`."
        ),
        request={"multipart/form-data": ScoreUpload},
        responses={201: ScoreImportResult, 400: ImportProblems, **error_responses(401, 403)},
        examples=[
            OpenApiExample(
                "Two new sources",
                value={
                    "sources_created": 2,
                    "sources_updated": 0,
                    "scores_created": 1500,
                    "scores_unchanged": 0,
                },
                response_only=True,
                status_codes=["201"],
            )
        ],
    )
    def post(self, request):
        upload = request.FILES.get("file")
        if upload is None:
            raise InvalidInput("file", "attach the scores file as 'file' (multipart/form-data)")
        slug = (request.data.get("batch") or "").strip() or None
        summary = import_scores(
            upload, filename=upload.name, batch=slug, actor=Actor.of(request.user)
        )
        return Response(dataclasses.asdict(summary), status=status.HTTP_201_CREATED)


class ScoreSourcesView(APIView):
    """The score sources covering the batch's items, with their coverage."""

    permission_classes = [CanAnalyse]

    @extend_schema(
        tags=["scores"],
        summary="Score sources covering a batch",
        description=(
            "Each score source that scores at least one of the batch's items, with how many "
            "of the items it scores."
        ),
        responses={200: SourceCoverageList, **error_responses(401, 403, 404)},
    )
    def get(self, request, slug: str):
        batch = get_object_or_404(Batch, slug=slug)
        return Response(selectors.coverage(batch))
