"""Researcher and admin API: batches, items, progress, annotators (API.md).

Token auth for scripts (``Authorization: Token <key>``), session auth for staff pages.
Reading needs the researcher role, changing the admin role (``annotation.access``).
"""

import dataclasses
from collections.abc import Mapping

from django.conf import settings
from django.shortcuts import get_object_or_404
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiExample, OpenApiParameter, extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import access, selectors
from annotation.access import CanManageAnnotators, CanManageBatches, CanViewBatches
from annotation.api.responses import (
    ANNOTATORS_EXAMPLE,
    HISTORY_EXAMPLE,
    IMPORT_EXAMPLE,
    IMPORT_REFUSED_EXAMPLE,
    PROGRESS_EXAMPLE,
    AnnotatorResponse,
    ExclusionResponse,
    HistoryEventResponse,
    ImportSummaryResponse,
    ProgressResponse,
)
from annotation.models import Annotator, Batch, BatchState, Item
from annotation.selectors import CategoryFilter
from annotation.services import annotators as annotator_services
from annotation.services import batches as batch_services
from annotation.services.batches import DESIGN_SETTINGS
from annotation.services.import_jobs import save_upload
from annotation.services.importing import import_items
from core.api.jobs import start_job_response
from core.api.shapes import JOB_EXAMPLE, JobResponse, error_responses
from core.audit import Actor, event_payload, history
from core.errors import InvalidInput, TooLarge
from core.text import check_text

CATEGORY_PARAMETERS = [
    OpenApiParameter(
        "category", OpenApiTypes.STR, OpenApiParameter.QUERY,
        description="Only the items whose query has this category (at most 200 characters; "
        "an unknown one gives an empty answer, not an error).",
    ),
    OpenApiParameter(
        "subcategory", OpenApiTypes.STR, OpenApiParameter.QUERY,
        description="Only the items whose query has this sub-category (with or without "
        "`category`).",
    ),
]  # fmt: skip


class BatchSerializer(serializers.ModelSerializer):
    class Meta:
        model = Batch
        fields = [
            "slug",
            "title",
            "kind",
            "state",
            "instructions",
            "consent_text",
            "scale_labels",
            "kind_settings",
            "annotations_per_item",
            "lease_seconds",
            "quota_per_annotator",
            "completion_code",
            "completion_url",
            *DESIGN_SETTINGS,
            "created_at",
            "published_at",
            "closed_at",
        ]
        read_only_fields = ["state", "created_at", "published_at", "closed_at"]
        # a new batch without a title takes its slug, as on the New batch page
        extra_kwargs = {
            "slug": {"validators": []},
            "title": {"required": False, "allow_blank": True},
        }

    def to_internal_value(self, data):
        # A key this API does not take is refused, naming it, rather than dropped: a
        # misspelt setting, or a state change sent here, would answer 200 and change
        # nothing. A read-only field sent back as it is (a batch read, edited and sent
        # whole) passes, as does "draft" for a new batch (which is one).
        if isinstance(data, Mapping):
            shown = self.to_representation(self.instance) if self.instance is not None else {}
            for key, value in data.items():
                if key not in self.fields:
                    raise InvalidInput(
                        key, "is not a batch setting (GET a batch for the fields it has)"
                    )
                if key not in self.Meta.read_only_fields or value == shown.get(key, _UNSET):
                    continue
                if key == "state" and self.instance is None and value == BatchState.DRAFT:
                    continue
                raise InvalidInput(
                    key,
                    "is changed with POST /api/v1/batches/<slug>/state"
                    if key == "state"
                    else "is set by the platform",
                )
        return super().to_internal_value(data)


_UNSET = object()


class StateChange(serializers.Serializer):
    state = serializers.ChoiceField(
        choices=BatchState.choices,
        help_text="live publishes (or resumes), paused pauses, closed closes for good.",
    )


BATCH_EXAMPLE = OpenApiExample(
    "A new absolute batch",
    value={
        "slug": "my-study",
        "kind": "absolute",
        "title": "Rate the answers",
        "annotations_per_item": 25,
        "lease_seconds": 600,
        "instructions": "Rate each answer from **1** (very poor) to **5** (excellent).",
    },
    request_only=True,
)


def _batch(slug: str) -> Batch:
    return get_object_or_404(Batch, slug=slug)


class BatchListView(APIView):
    permission_classes = [CanManageBatches]

    @extend_schema(
        tags=["batches"],
        summary="List batches",
        description=(
            "Every batch, newest first, with its settings and state; with `category` "
            "(and/or `subcategory`), only the batches holding items of it."
        ),
        parameters=CATEGORY_PARAMETERS,
        responses={200: BatchSerializer(many=True), **error_responses(400, 401, 403)},
    )
    def get(self, request):
        categories = CategoryFilter.from_params(request.query_params)
        batches = Batch.objects.order_by("-created_at")
        if categories.active:
            batches = batches.filter(pk__in=Item.objects.filter(categories.q()).values("batch"))
        return Response(BatchSerializer(batches, many=True).data)

    @extend_schema(
        tags=["batches"],
        summary="Create a batch",
        description=(
            "A new batch in the draft state. `slug` and `kind` are fixed from now on; "
            "unset settings take their defaults (N = 25, a 600 s lease, a random completion "
            "code). Upload items next, then publish it (`POST …/state`)."
        ),
        request=BatchSerializer,
        responses={201: BatchSerializer, **error_responses(400, 401, 403, 409)},
        examples=[BATCH_EXAMPLE],
    )
    def post(self, request):
        serializer = BatchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        batch = batch_services.create_batch(**data, actor=Actor.of(request.user))
        return Response(BatchSerializer(batch).data, status=status.HTTP_201_CREATED)


class BatchDetailView(APIView):
    permission_classes = [CanManageBatches]

    @extend_schema(
        tags=["batches"],
        summary="Read a batch",
        description="The batch's settings (N, lease time, quota, texts, codes), state and dates.",
        responses={200: BatchSerializer, **error_responses(401, 403, 404)},
    )
    def get(self, request, slug: str):
        return Response(BatchSerializer(_batch(slug)).data)

    @extend_schema(
        tags=["batches"],
        summary="Change a batch's settings",
        description=(
            "Send only what changes. `slug` and `kind` are fixed; N "
            "(`annotations_per_item`) never goes below what an item already holds (counted "
            "labels plus open leases): 409 then. Recorded in the batch's history."
        ),
        request=BatchSerializer,
        responses={200: BatchSerializer, **error_responses(400, 401, 403, 404, 409)},
    )
    def patch(self, request, slug: str):
        batch = _batch(slug)
        serializer = BatchSerializer(batch, data=request.data, partial=True)
        serializer.is_valid(raise_exception=True)
        changes = dict(serializer.validated_data)
        for fixed in ("slug", "kind"):
            if fixed in changes and changes.pop(fixed) != getattr(batch, fixed):
                raise InvalidInput(fixed, "cannot be changed after creation")
        batch = batch_services.update_batch(batch, changes, actor=Actor.of(request.user))
        return Response(BatchSerializer(batch).data)


class BatchStateView(APIView):
    permission_classes = [CanManageBatches]

    @extend_schema(
        tags=["batches"],
        summary="Publish, pause, resume or close a batch",
        description=(
            "draft → live ⇄ paused → closed (a draft may also close). Publishing needs at "
            "least one item. A label for an item handed out before a pause or close is "
            "still accepted. The same rules as the batch page and `manage.py batch_state`."
        ),
        request=StateChange,
        responses={200: BatchSerializer, **error_responses(400, 401, 403, 404, 409)},
        examples=[OpenApiExample("Publish", value={"state": "live"}, request_only=True)],
    )
    def post(self, request, slug: str):
        change = StateChange(data=request.data)
        change.is_valid(raise_exception=True)
        batch = batch_services.change_state(
            _batch(slug), change.validated_data["state"], actor=Actor.of(request.user)
        )
        return Response(BatchSerializer(batch).data)


class ItemUpload(serializers.Serializer):
    file = serializers.FileField(help_text="Items as .jsonl or .csv (FORMATS.md)")


class BatchItemsView(APIView):
    """Upload items; all-or-nothing, 400 with every ``FILE:LINE: field: message``."""

    permission_classes = [CanManageBatches]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        tags=["items"],
        summary="Upload items",
        description=(
            "A .jsonl or .csv items file (FORMATS.md) as multipart `file`. All or nothing: "
            "a file with any problem imports nothing and answers 400 with every problem as "
            "`FILE:LINE: field: message` in `problems`. A file over `SYNC_IMPORT_MAX_BYTES` "
            "(5 MiB) answers 413 before it is read: send it to `…/import-jobs`."
        ),
        request={"multipart/form-data": ItemUpload},
        responses={
            201: ImportSummaryResponse,
            **error_responses(400, 401, 403, 404, 409, 413),
        },
        examples=[IMPORT_EXAMPLE, IMPORT_REFUSED_EXAMPLE],
    )
    def post(self, request, slug: str):
        batch = _batch(slug)
        # decided from Content-Length before the body is read, then from the file itself
        _refuse_large_sync_upload(request.META.get("CONTENT_LENGTH"), slug)
        upload = request.FILES.get("file")
        if upload is None:
            raise InvalidInput("file", "attach the items file as 'file' (multipart/form-data)")
        _refuse_large_sync_upload(upload.size, slug)
        summary = import_items(batch, upload, filename=upload.name, actor=Actor.of(request.user))
        return Response(dataclasses.asdict(summary), status=status.HTTP_201_CREATED)


def _refuse_large_sync_upload(size, slug: str) -> None:
    try:
        size = int(size or 0)
    except ValueError:
        return  # the request guard answers a bad Content-Length
    limit = settings.SYNC_IMPORT_MAX_BYTES
    if size > limit:
        raise TooLarge(
            f"The upload is {size:,} bytes; this synchronous upload takes at most {limit:,} "
            f"(SYNC_IMPORT_MAX_BYTES), since a larger import could outlast the request. "
            f"Send it to POST /api/v1/batches/{slug}/import-jobs instead: the same import "
            "as a background job, for files up to UPLOAD_MAX_BYTES."
        )


class ImportJobView(APIView):
    """Upload items as a background job (for big files); poll the job for the outcome.

    The job fails with ``result.problems`` listing every ``FILE:LINE: field: message``
    when the file is rejected; nothing is imported then.
    """

    permission_classes = [CanManageBatches]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(
        tags=["items"],
        summary="Upload items as a background job",
        description=(
            "The same import as `…/items`, run as a job: answers 202 with the job at once; "
            "poll its `status_url`. A refused file makes the job fail with "
            "`result.problems` listing every `FILE:LINE: field: message`."
        ),
        request={"multipart/form-data": ItemUpload},
        responses={202: JobResponse, **error_responses(400, 401, 403, 404)},
        examples=[JOB_EXAMPLE],
    )
    def post(self, request, slug: str):
        batch = _batch(slug)
        upload = request.FILES.get("file")
        if upload is None:
            raise InvalidInput("file", "attach the items file as 'file' (multipart/form-data)")
        stored = save_upload(upload, upload.name)
        params = {"stored_file": stored, "filename": upload.name}
        return start_job_response(request, "import", batch, params)


class BatchProgressView(APIView):
    permission_classes = [CanViewBatches]

    @extend_schema(
        tags=["batches"],
        summary="A batch's live figures",
        description=(
            "Items complete / in progress / untouched, labels by status, open leases, "
            "active annotators, median time per label and the projected finish (with "
            "`projection_note` saying what it rests on, or why there is none). The batch "
            "page polls this every few seconds. With `category`/`subcategory`, every "
            "figure covers those items only (and the answer repeats the filter)."
        ),
        parameters=CATEGORY_PARAMETERS,
        responses={200: ProgressResponse, **error_responses(400, 401, 403, 404)},
        examples=[PROGRESS_EXAMPLE],
    )
    def get(self, request, slug: str):
        categories = CategoryFilter.from_params(request.query_params)
        return Response(selectors.batch_dashboard(_batch(slug), categories))


class BatchAnnotatorsView(APIView):
    """Annotators of a batch with their statistics; platform ids for admins only."""

    permission_classes = [CanViewBatches]

    @extend_schema(
        tags=["annotators"],
        summary="A batch's annotators with their statistics",
        description=(
            "One row per annotator who entered the batch: labels by status, median time "
            "per label, attention checks, first and last seen. `platform_id` (the "
            "platform's own id) is shown to admins only. With `category`/`subcategory`, "
            "only annotators with labels of those items, their figures counting those labels."
        ),
        parameters=CATEGORY_PARAMETERS,
        responses={200: AnnotatorResponse(many=True), **error_responses(400, 401, 403, 404)},
        examples=[ANNOTATORS_EXAMPLE],
    )
    def get(self, request, slug: str):
        categories = CategoryFilter.from_params(request.query_params)
        rows = selectors.annotator_rows(_batch(slug), categories)
        if not access.can_manage_annotators(request.user):
            for row in rows:
                row.pop("platform_id")
        return Response(rows)


class ExclusionView(APIView):
    permission_classes = [CanManageAnnotators]
    parser_classes = [JSONParser, FormParser]
    include = False

    @extend_schema(
        tags=["annotators"],
        summary="Exclude an annotator, or undo it",
        description=(
            "`…/exclude`: the annotator's labels in this batch stop counting (kept as "
            "`excluded`) and their slots reopen, so every item still ends with N counted "
            "labels. `…/include`: each excluded label counts again where its item still "
            "has room, and becomes `surplus` where the slot was refilled meanwhile."
        ),
        request={
            "application/json": {
                "type": "object",
                "properties": {"reason": {"type": "string", "maxLength": 500}},
            }
        },
        responses={200: ExclusionResponse, **error_responses(400, 401, 403, 404, 409)},
    )
    def post(self, request, slug: str, pseudonym: str):
        batch = _batch(slug)
        annotator = get_object_or_404(Annotator, pseudonym=pseudonym)
        if self.include:
            outcome = annotator_services.include_annotator(
                batch, annotator, actor=Actor.of(request.user)
            )
            return Response({"annotator": pseudonym, "status": "active", **outcome})
        affected = annotator_services.exclude_annotator(
            batch, annotator, actor=Actor.of(request.user), reason=_exclusion_reason(request.data)
        )
        return Response({"annotator": pseudonym, "status": "excluded", "labels_excluded": affected})


MAX_REASON_CHARS = 500


def _exclusion_reason(body) -> str:
    """The optional ``reason`` of an exclusion (kept in the batch's history); any other
    key, or a body that is not an object, is refused rather than ignored."""
    if body in (None, "") or (hasattr(body, "keys") and not list(body.keys())):
        return ""
    if not hasattr(body, "keys"):
        raise InvalidInput("body", 'must be a JSON object, e.g. {"reason": "..."}')
    unknown = sorted(set(body.keys()) - {"reason"})
    if unknown:
        raise InvalidInput(unknown[0], "is not taken here (only reason)")
    reason = body.get("reason", "")
    if not isinstance(reason, str) or len(reason) > MAX_REASON_CHARS:
        raise InvalidInput("reason", f"must be a text of at most {MAX_REASON_CHARS} characters")
    check_text("reason", reason, multiline=True)
    return reason.strip()


class BatchHistoryView(APIView):
    """The batch's audit trail, newest first: who changed what, when (and why)."""

    permission_classes = [CanViewBatches]

    @extend_schema(
        tags=["history"],
        summary="A batch's audit trail",
        description=(
            "Every change to the batch, newest first: who (a user, the command line, the "
            "system or a policy), when, what changed and why."
        ),
        responses={200: HistoryEventResponse(many=True), **error_responses(401, 403, 404)},
        examples=[HISTORY_EXAMPLE],
    )
    def get(self, request, slug: str):
        return Response([event_payload(event) for event in history(_batch(slug))])
