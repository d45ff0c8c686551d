"""Researcher and admin API: batches, items, progress, annotators (API.md).

Token auth for scripts (``Authorization: Token <key>``), session auth for staff pages.
Reading needs the researcher role, changing the admin role (``annotation.access``).
"""

import dataclasses

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import extend_schema
from rest_framework import serializers, status
from rest_framework.parsers import FormParser, JSONParser, MultiPartParser
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import access, selectors
from annotation.access import CanManageAnnotators, CanManageBatches, CanViewBatches
from annotation.models import Annotator, Batch
from annotation.services import annotators as annotator_services
from annotation.services import batches as batch_services
from annotation.services.import_jobs import save_upload
from annotation.services.importing import import_items
from core.api.jobs import start_job_response
from core.audit import Actor, event_payload, history
from core.errors import InvalidInput


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
            "created_at",
            "published_at",
            "closed_at",
        ]
        read_only_fields = ["state", "created_at", "published_at", "closed_at"]
        extra_kwargs = {"slug": {"validators": []}}


class StateChange(serializers.Serializer):
    state = serializers.ChoiceField(choices=["draft", "live", "paused", "closed"])


def _batch(slug: str) -> Batch:
    return get_object_or_404(Batch, slug=slug)


class BatchListView(APIView):
    permission_classes = [CanManageBatches]

    @extend_schema(responses=BatchSerializer(many=True))
    def get(self, request):
        batches = Batch.objects.order_by("-created_at")
        return Response(BatchSerializer(batches, many=True).data)

    @extend_schema(request=BatchSerializer, responses={201: BatchSerializer})
    def post(self, request):
        serializer = BatchSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = dict(serializer.validated_data)
        batch = batch_services.create_batch(**data, actor=Actor.of(request.user))
        return Response(BatchSerializer(batch).data, status=status.HTTP_201_CREATED)


class BatchDetailView(APIView):
    permission_classes = [CanManageBatches]

    @extend_schema(responses=BatchSerializer)
    def get(self, request, slug: str):
        return Response(BatchSerializer(_batch(slug)).data)

    @extend_schema(request=BatchSerializer, responses=BatchSerializer)
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

    @extend_schema(request=StateChange, responses=BatchSerializer)
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

    @extend_schema(request={"multipart/form-data": ItemUpload}, responses={201: dict})
    def post(self, request, slug: str):
        upload = request.FILES.get("file")
        if upload is None:
            raise InvalidInput("file", "attach the items file as 'file' (multipart/form-data)")
        summary = import_items(
            _batch(slug), upload, filename=upload.name, actor=Actor.of(request.user)
        )
        return Response(dataclasses.asdict(summary), status=status.HTTP_201_CREATED)


class ImportJobView(APIView):
    """Upload items as a background job (for big files); poll the job for the outcome.

    The job fails with ``result.problems`` listing every ``FILE:LINE: field: message``
    when the file is rejected; nothing is imported then.
    """

    permission_classes = [CanManageBatches]
    parser_classes = [MultiPartParser, FormParser]

    @extend_schema(request={"multipart/form-data": ItemUpload}, responses={202: dict})
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

    @extend_schema(responses=dict)
    def get(self, request, slug: str):
        return Response(selectors.batch_dashboard(_batch(slug)))


class BatchAnnotatorsView(APIView):
    """Annotators of a batch with their statistics; platform ids for admins only."""

    permission_classes = [CanViewBatches]

    @extend_schema(responses=dict)
    def get(self, request, slug: str):
        rows = selectors.annotator_rows(_batch(slug))
        if not access.can_manage_annotators(request.user):
            for row in rows:
                row.pop("platform_id")
        return Response(rows)


class ExclusionView(APIView):
    permission_classes = [CanManageAnnotators]
    parser_classes = [JSONParser, FormParser]
    include = False

    @extend_schema(request=None, responses=dict)
    def post(self, request, slug: str, pseudonym: str):
        batch = _batch(slug)
        annotator = get_object_or_404(Annotator, pseudonym=pseudonym)
        if self.include:
            outcome = annotator_services.include_annotator(
                batch, annotator, actor=Actor.of(request.user)
            )
            return Response({"annotator": pseudonym, "status": "active", **outcome})
        affected = annotator_services.exclude_annotator(
            batch, annotator, actor=Actor.of(request.user)
        )
        return Response({"annotator": pseudonym, "status": "excluded", "labels_excluded": affected})


class BatchHistoryView(APIView):
    """The batch's audit trail, newest first: who changed what, when (and why)."""

    permission_classes = [CanViewBatches]

    @extend_schema(responses=dict)
    def get(self, request, slug: str):
        return Response([event_payload(event) for event in history(_batch(slug))])
