"""Label exports over HTTP (streamed) and as background jobs (FORMATS.md, API.md).

``GET /api/v1/batches/<slug>/export?layout=&format=&all_statuses=&category=&subcategory=``
answers with the file itself (``category``/``subcategory``: only those items, the data card
says so): JSONL, CSV and the Markdown card are generated while they are sent; Parquet is
written to a temporary file first and streamed from it (the file is deleted when the
response is closed). ``POST /api/v1/batches/<slug>/export-jobs`` records the same export as
a job and answers ``202`` with the job (poll ``status_url``, fetch ``download_url``).

``format`` is also DRF's URL format override; these views ignore it for content
negotiation (errors are always JSON), so ``?format=csv`` means the export's format.
"""

from django.http import FileResponse, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.utils.http import content_disposition_header
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.views import APIView

from annotation.access import CanExport
from annotation.models import Batch
from annotation.selectors import TAXONOMY_PARAMETERS, CategoryFilter
from annotation.services.exports.delivery import TemporaryExportFile, stream_export
from annotation.services.exports.schema import (
    CARD_FORMAT,
    CONTENT_TYPES,
    EXPORT_FORMATS,
    LAYOUTS,
    LEWIDI_FORMAT,
    export_params,
)
from core.api.jobs import start_job_response
from core.api.shapes import JOB_EXAMPLE, JobResponse, error_responses
from core.audit import Actor
from core.errors import InvalidInput

FORMATS = (*EXPORT_FORMATS, CARD_FORMAT, LEWIDI_FORMAT)

LAYOUT_HELP = (
    "long: one row per label; dense: one row per item with its counted labels as a list; "
    "annotators: one row per contributing annotator; card: a Markdown data card; lewidi: "
    "the LeWiDi perspectivist JSON (per item its annotators, annotations and soft label)."
)
FORMAT_HELP = (
    "jsonl (default), csv or parquet for the tables; md for the card, json for lewidi "
    "(their defaults)."
)
ALL_STATUSES_HELP = (
    "1: the long layout also holds surplus and excluded labels (column status); "
    "0 (default): counted labels only. No effect on the other layouts."
)

CATEGORY_HELP = (
    "Only the items whose query has this category (at most 200 characters); an unknown "
    "one gives an empty export. The data card says the export is a subset, and by which "
    "filter."
)
SUBCATEGORY_HELP = "Only the items whose query has this sub-category (with or without `category`)."

EXPORT_FILE_HELP = (
    "The export as a download: JSONL (one object per row), CSV (header row; lists as JSON "
    "text), Parquet (lists as list columns, integers as int64), the Markdown card or the "
    "LeWiDi JSON."
)

EXPORT_PARAMETERS = [
    OpenApiParameter(
        "layout", OpenApiTypes.STR, OpenApiParameter.QUERY, enum=LAYOUTS, default="long",
        description=LAYOUT_HELP,
    ),
    OpenApiParameter(
        "format", OpenApiTypes.STR, OpenApiParameter.QUERY, enum=FORMATS, description=FORMAT_HELP
    ),
    OpenApiParameter(
        "all_statuses", OpenApiTypes.INT, OpenApiParameter.QUERY, enum=[0, 1], default=0,
        description=ALL_STATUSES_HELP,
    ),
    OpenApiParameter(
        "category", OpenApiTypes.STR, OpenApiParameter.QUERY, description=CATEGORY_HELP
    ),
    OpenApiParameter(
        "subcategory", OpenApiTypes.STR, OpenApiParameter.QUERY, description=SUBCATEGORY_HELP
    ),
]  # fmt: skip


class ExportJobRequest(serializers.Serializer):
    """The body of an export job request (JSON or form); same meaning as the GET params."""

    layout = serializers.ChoiceField(choices=LAYOUTS, default="long", help_text=LAYOUT_HELP)
    format = serializers.ChoiceField(choices=FORMATS, required=False, help_text=FORMAT_HELP)
    all_statuses = serializers.BooleanField(default=False, help_text=ALL_STATUSES_HELP)
    category = serializers.CharField(required=False, max_length=200, help_text=CATEGORY_HELP)
    subcategory = serializers.CharField(required=False, max_length=200, help_text=SUBCATEGORY_HELP)


def _text(description: str) -> dict:
    return {"type": "string", "description": description}


# The LeWiDi export is a JSON object keyed by item id; each value has these fields
# (FORMATS.md, "LeWiDi: the perspectivist JSON").
LEWIDI_SCHEMA = {
    "type": "object",
    "description": "item id -> the item",
    "additionalProperties": {
        "type": "object",
        "properties": {
            "text": {
                "type": "object",
                "properties": {
                    "query": _text("the query"),
                    "response": _text("absolute batches: the response"),
                    "response_a": _text("pairwise batches: response A"),
                    "response_b": _text("pairwise batches: response B"),
                },
            },
            "annotation task": _text("the batch's kind"),
            "number of annotations": {"type": "integer"},
            "annotators": _text("pseudonyms, comma-separated, in submission order"),
            "annotations": _text("the labels, comma-separated, in the annotators' order"),
            "hard_label": _text("the most common label (ties: the lowest)"),
            "soft_label": {
                "type": "object",
                "description": "label -> share of the annotations, every label of the kind",
                "additionalProperties": {"type": "number"},
            },
            "other_info": {
                "type": "object",
                "description": "item_id, query_id, category, subcategory, the model(s) and, "
                "with a questionnaire, annotator_answers (pseudonym -> answers)",
            },
        },
    },
}


class ExportErrorSerializer(serializers.Serializer):
    detail = serializers.CharField()
    field = serializers.CharField(required=False)


class IgnoreFormatOverride(DefaultContentNegotiation):
    """Always the first renderer (JSON, for errors); the ``format`` param is the export's."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


def _batch(slug: str) -> Batch:
    return get_object_or_404(Batch, slug=slug)


class BatchExportView(APIView):
    """Download an export of a batch's labels, streamed."""

    permission_classes = [CanExport]
    content_negotiation_class = IgnoreFormatOverride

    @extend_schema(
        tags=["exports"],
        summary="Download a batch's labels",
        description=(
            "The export itself, streamed while it is written: one row per label (`long`, "
            "counted only unless `all_statuses=1`), one row per item with its counted "
            "labels as a list (`dense`), one row per annotator (`annotators`), or the "
            "Markdown data card (`card`). Columns: FORMATS.md. For very large batches, "
            "`POST …/export-jobs` prepares the file in the background."
        ),
        parameters=EXPORT_PARAMETERS,
        responses={
            (200, CONTENT_TYPES["jsonl"].split(";")[0]): OpenApiResponse(
                OpenApiTypes.STR, description=EXPORT_FILE_HELP
            ),
            (200, CONTENT_TYPES["csv"].split(";")[0]): OpenApiResponse(
                OpenApiTypes.STR, description=EXPORT_FILE_HELP
            ),
            (200, CONTENT_TYPES["parquet"]): OpenApiResponse(
                OpenApiTypes.BINARY, description=EXPORT_FILE_HELP
            ),
            (200, CONTENT_TYPES["md"].split(";")[0]): OpenApiResponse(
                OpenApiTypes.STR, description=EXPORT_FILE_HELP
            ),
            (200, CONTENT_TYPES["json"].split(";")[0]): OpenApiResponse(
                LEWIDI_SCHEMA, description="The LeWiDi export (layout=lewidi)."
            ),
            (400, "application/json"): OpenApiResponse(
                ExportErrorSerializer, description="a bad parameter, named in detail and field"
            ),
            **error_responses(401, 403, 404),
        },
    )
    def get(self, request, slug: str):
        batch = _batch(slug)
        layout, fmt, all_statuses = export_params(
            request.query_params.get("layout"),
            request.query_params.get("format"),
            request.query_params.get("all_statuses"),
        )
        categories = CategoryFilter.from_params(request.query_params)
        chunks, content_type, filename = stream_export(
            batch,
            layout,
            fmt,
            all_statuses=all_statuses,
            actor=Actor.of(request.user),
            categories=categories,
        )
        if isinstance(chunks, TemporaryExportFile):
            response = FileResponse(
                chunks, as_attachment=True, filename=filename, content_type=content_type
            )
            response.block_size = TemporaryExportFile.block_size
            return response
        response = StreamingHttpResponse(chunks, content_type=content_type)
        response["Content-Disposition"] = content_disposition_header(True, filename)
        return response


class ExportJobView(APIView):
    """Start an export as a background job; poll the job and download its file."""

    permission_classes = [CanExport]
    parser_classes = [JSONParser, FormParser, MultiPartParser]
    content_negotiation_class = IgnoreFormatOverride

    @extend_schema(
        tags=["exports"],
        summary="Prepare an export as a background job",
        description=(
            "The same export as `GET …/export`, written to a file by a job: answers 202 "
            "with the job; poll its `status_url`, then fetch its `download_url`. "
            "`category`/`subcategory` may come in the body or the query string."
        ),
        request=ExportJobRequest,
        responses={
            202: OpenApiResponse(JobResponse, description="The job; poll its status_url."),
            400: ExportErrorSerializer,
            **error_responses(401, 403, 404),
        },
        examples=[JOB_EXAMPLE],
    )
    def post(self, request, slug: str):
        batch = _batch(slug)
        data = request.data
        if not hasattr(data, "get"):
            raise InvalidInput("body", "send an object with layout, format and all_statuses")
        layout, fmt, all_statuses = export_params(
            data.get("layout"), data.get("format"), data.get("all_statuses")
        )
        categories = CategoryFilter.from_params(
            {
                name: data.get(name) if data.get(name) not in (None, "") else request.GET.get(name)
                for name in TAXONOMY_PARAMETERS
            }
        )
        params = {
            "layout": layout,
            "format": fmt,
            "all_statuses": all_statuses,
            **categories.params(),
        }
        return start_job_response(request, "export", batch, params)
