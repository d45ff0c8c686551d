"""Django's admin for the crowd app's records: read-only — they change only through the
services (a ledger edited by hand would no longer say what was paid)."""

from django.contrib import admin

from core.admin import ReadOnlyAdmin
from crowd.models import (
    BonusLine,
    BonusRun,
    MTurkHIT,
    PlatformCall,
    PlatformSubmission,
    ReviewDecision,
    WebhookEvent,
)


@admin.register(PlatformCall)
class PlatformCallAdmin(ReadOnlyAdmin):
    list_display = ["started_at", "platform", "method", "path", "attempt", "status_code", "error"]
    list_filter = ["platform", "method"]


@admin.register(WebhookEvent)
class WebhookEventAdmin(ReadOnlyAdmin):
    list_display = ["received_at", "event_id", "outcome", "event_type", "resource_id", "status"]
    list_filter = ["outcome"]
    search_fields = ["event_id", "resource_id"]


@admin.register(PlatformSubmission)
class PlatformSubmissionAdmin(ReadOnlyAdmin):
    list_display = ["batch", "platform", "submission_id", "participant_id", "status", "synced_at"]
    list_filter = ["platform", "status"]
    search_fields = ["submission_id", "participant_id", "batch__slug"]


@admin.register(ReviewDecision)
class ReviewDecisionAdmin(ReadOnlyAdmin):
    list_display = ["batch", "platform", "submission_id", "action", "state", "updated_at"]
    list_filter = ["platform", "action", "state"]


class BonusLineInline(admin.TabularInline):
    model = BonusLine
    extra = 0
    can_delete = False
    readonly_fields = ["participant_id", "assignment_id", "amount", "request_token", "state"]

    def has_add_permission(self, request, obj=None):
        return False


@admin.register(BonusRun)
class BonusRunAdmin(ReadOnlyAdmin):
    list_display = ["pk", "batch", "platform", "basis", "rate", "state", "created_at"]
    list_filter = ["platform", "state"]
    inlines = [BonusLineInline]


@admin.register(MTurkHIT)
class MTurkHITAdmin(ReadOnlyAdmin):
    list_display = ["hit_id", "batch", "max_assignments", "reward", "sandbox", "created_at"]
