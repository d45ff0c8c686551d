"""Django's admin for power users: every model, searchable and filterable — and no way
around the services.

What the guarantees rest on is read-only here: a batch's state and kind, item counters
and targets, assignments, labels and participations. Batch settings (N included) are
saved through ``services.batches.update_batch``, which checks them as the pages and the
API do and moves every item's target with N; state changes and exclusions are admin
actions that call the same services as the pages, recorded in the audit trail under the
admin's name.
"""

from django import forms
from django.contrib import admin, messages
from django.http import HttpResponseRedirect

from annotation import setting_rules as rules
from annotation.models import (
    Annotator,
    Assignment,
    Batch,
    BatchSnapshot,
    BatchState,
    Item,
    Label,
    Participation,
    Query,
    Response,
)
from annotation.services import annotators as annotator_services
from annotation.services import batches as batch_services
from core.admin import ReadOnlyAdmin
from core.audit import Actor
from core.errors import InvalidInput, ServiceError

# Settings the admin may edit: exactly those update_batch accepts.
EDITABLE_BATCH_FIELDS = batch_services.EDITABLE_FIELDS | {"annotations_per_item"}


class BatchAdminForm(forms.ModelForm):
    """Checks the changed settings with the services' rules before anything is saved."""

    completion_url = forms.URLField(
        max_length=rules.MAX_URL_CHARS, required=False, assume_scheme="https"
    )
    screen_out_url = forms.URLField(
        max_length=rules.MAX_URL_CHARS, required=False, assume_scheme="https"
    )

    class Meta:
        model = Batch
        fields = sorted(EDITABLE_BATCH_FIELDS)

    def clean(self):
        cleaned = super().clean()
        changes = {name: cleaned[name] for name in self.changed_data if name in cleaned}
        try:
            batch_services.validate_settings(changes, self.instance.task_kind)
            if "kind_settings" in changes:
                self.instance.task_kind.clean_settings(changes["kind_settings"])
        except InvalidInput as error:
            field = error.field.split(".")[0]
            self.add_error(field if field in self.fields else None, error.message)
        return cleaned


@admin.register(Batch)
class BatchAdmin(admin.ModelAdmin):
    form = BatchAdminForm
    list_display = ["slug", "title", "kind", "state", "annotations_per_item", "created_at"]
    list_filter = ["kind", "state"]
    search_fields = ["slug", "title"]
    actions = ["publish", "pause", "close"]

    def get_readonly_fields(self, request, obj=None):
        return [
            field.name
            for field in Batch._meta.concrete_fields
            if field.name not in EDITABLE_BATCH_FIELDS
        ]

    def has_add_permission(self, request):
        return False  # batches are created on /manage/new, by the API or create_batch

    def get_actions(self, request):
        actions = super().get_actions(request)
        actions.pop("delete_selected", None)  # one batch at a time, drafts only
        return actions

    def has_delete_permission(self, request, obj=None):
        # A draft can go; a published batch is a study's record (its labels are protected).
        return super().has_delete_permission(request, obj) and (
            obj is None or obj.state == BatchState.DRAFT
        )

    def save_model(self, request, obj, form, change):
        changes = {
            name: form.cleaned_data[name]
            for name in form.changed_data
            if name in EDITABLE_BATCH_FIELDS
        }
        try:
            batch_services.update_batch(
                Batch.objects.get(pk=obj.pk), changes, actor=Actor.of(request.user)
            )
        except ServiceError as error:  # e.g. N below what an item already holds
            request._batch_admin_refusal = error
        obj.refresh_from_db()

    def response_change(self, request, obj):
        refusal = getattr(request, "_batch_admin_refusal", None)
        if refusal is not None:
            self.message_user(request, f"Nothing was changed: {refusal}", messages.ERROR)
            return HttpResponseRedirect(request.path)
        return super().response_change(request, obj)

    def _change_state(self, request, queryset, state: str) -> None:
        for batch in queryset:
            previous = batch.state
            try:
                batch = batch_services.change_state(batch, state, actor=Actor.of(request.user))
            except ServiceError as error:
                self.message_user(request, f"{batch.slug}: {error}", messages.ERROR)
                continue
            if batch.state != previous:
                self.message_user(request, f"{batch.slug} is now {batch.state}.")

    @admin.action(description="Publish or resume the selected batches", permissions=["change"])
    def publish(self, request, queryset):
        self._change_state(request, queryset, BatchState.LIVE)

    @admin.action(description="Pause the selected batches", permissions=["change"])
    def pause(self, request, queryset):
        self._change_state(request, queryset, BatchState.PAUSED)

    @admin.action(description="Close the selected batches (final)", permissions=["change"])
    def close(self, request, queryset):
        self._change_state(request, queryset, BatchState.CLOSED)


@admin.register(Query)
class QueryAdmin(admin.ModelAdmin):
    list_display = ["query_id", "category", "subcategory"]
    search_fields = ["query_id", "text", "category", "subcategory"]


@admin.register(Response)
class ResponseAdmin(admin.ModelAdmin):
    list_display = ["response_id", "model", "query"]
    search_fields = ["response_id", "model", "text"]
    raw_id_fields = ["query"]


@admin.register(Item)
class ItemAdmin(ReadOnlyAdmin):
    """Items come from imports; their counters and target belong to ``services.slots``."""

    list_display = ["item_id", "batch", "counted_count", "reserved_count", "target"]
    list_filter = ["batch"]
    search_fields = ["item_id"]


@admin.register(Annotator)
class AnnotatorAdmin(ReadOnlyAdmin):
    list_display = ["pseudonym", "platform", "platform_id", "created_at"]
    list_filter = ["platform"]
    search_fields = ["pseudonym", "platform_id"]


@admin.register(Participation)
class ParticipationAdmin(ReadOnlyAdmin):
    """Exclusion reopens the excluded labels' slots, so it goes through the service."""

    list_display = ["annotator", "batch", "status", "first_seen_at", "last_seen_at"]
    list_filter = ["batch", "status"]
    actions = ["exclude_annotators", "include_annotators"]

    def has_manage_annotators_permission(self, request) -> bool:
        return request.user.has_perm("annotation.manage_annotators")

    @admin.action(
        description="Exclude the selected annotators (their slots reopen)",
        permissions=["manage_annotators"],
    )
    def exclude_annotators(self, request, queryset):
        for participation in queryset.select_related("batch", "annotator"):
            excluded = annotator_services.exclude_annotator(
                participation.batch,
                participation.annotator,
                actor=Actor.of(request.user),
                reason="excluded in the Django admin",
            )
            self.message_user(
                request,
                f"{participation.annotator.pseudonym} excluded from "
                f"{participation.batch.slug} ({excluded} labels no longer counted).",
            )

    @admin.action(
        description="Include the selected annotators again", permissions=["manage_annotators"]
    )
    def include_annotators(self, request, queryset):
        for participation in queryset.select_related("batch", "annotator"):
            outcome = annotator_services.include_annotator(
                participation.batch, participation.annotator, actor=Actor.of(request.user)
            )
            self.message_user(
                request,
                f"{participation.annotator.pseudonym} included in {participation.batch.slug} "
                f"({outcome['counted']} counted, {outcome['surplus']} surplus).",
            )


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
