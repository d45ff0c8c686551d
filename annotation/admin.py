"""Django's admin for power users: every model, searchable and filterable."""

from django.contrib import admin

from annotation.models import (
    Annotator,
    Assignment,
    Batch,
    BatchSnapshot,
    Item,
    Label,
    Participation,
    Query,
    Response,
)
from core.admin import ReadOnlyAdmin


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    list_display = ["slug", "title", "kind", "state", "annotations_per_item", "created_at"]
    list_filter = ["kind", "state"]
    search_fields = ["slug", "title"]


@admin.register(Query)
class QueryAdmin(admin.ModelAdmin):
    list_display = ["query_id", "category"]
    search_fields = ["query_id", "text", "category"]


@admin.register(Response)
class ResponseAdmin(admin.ModelAdmin):
    list_display = ["response_id", "model", "query"]
    search_fields = ["response_id", "model", "text"]
    raw_id_fields = ["query"]


@admin.register(Item)
class ItemAdmin(admin.ModelAdmin):
    list_display = ["item_id", "batch", "counted_count", "reserved_count", "target"]
    list_filter = ["batch"]
    search_fields = ["item_id"]
    raw_id_fields = ["query", "response", "response_a", "response_b"]
    readonly_fields = ["counted_count", "reserved_count", "target"]


@admin.register(Annotator)
class AnnotatorAdmin(admin.ModelAdmin):
    list_display = ["pseudonym", "platform", "platform_id", "created_at"]
    list_filter = ["platform"]
    search_fields = ["pseudonym", "platform_id"]


@admin.register(Participation)
class ParticipationAdmin(admin.ModelAdmin):
    list_display = ["annotator", "batch", "status", "first_seen_at", "last_seen_at"]
    list_filter = ["batch", "status"]
    raw_id_fields = ["annotator"]


@admin.register(Assignment)
class AssignmentAdmin(ReadOnlyAdmin):
    list_display = ["id", "batch", "item", "annotator", "state", "expires_at"]
    list_filter = ["batch", "state"]


@admin.register(Label)
class LabelAdmin(ReadOnlyAdmin):
    list_display = ["item", "annotator", "value", "status", "duration_ms", "submitted_at"]
    list_filter = ["batch", "status", "kind"]
    search_fields = ["item__item_id", "annotator__pseudonym"]


@admin.register(BatchSnapshot)
class BatchSnapshotAdmin(ReadOnlyAdmin):
    list_display = ["batch", "taken_at", "items_complete", "labels_counted", "active_annotators"]
    list_filter = ["batch"]
