"""Django's admin for the platform records: read-only (jobs and the audit trail are
written by the services only)."""

from django.contrib import admin

from core.models import AuditEvent, Job, JobChunk


class ReadOnlyAdmin(admin.ModelAdmin):
    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False

    def has_delete_permission(self, request, obj=None):
        return False


@admin.register(Job)
class JobAdmin(ReadOnlyAdmin):
    list_display = ["id", "kind", "subject_type", "subject_id", "state", "progress", "created_at"]
    list_filter = ["kind", "state"]


@admin.register(JobChunk)
class JobChunkAdmin(ReadOnlyAdmin):
    list_display = ["job", "index", "final", "state", "attempts", "worker", "seconds"]
    list_filter = ["state", "final"]


@admin.register(AuditEvent)
class AuditEventAdmin(ReadOnlyAdmin):
    list_display = ["at", "actor_name", "action", "subject_label"]
    list_filter = ["action"]
    search_fields = ["actor_name", "subject_label", "action"]
