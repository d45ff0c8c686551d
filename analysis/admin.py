"""Django's admin for score sources and scores (searchable, filterable, read-only scores)."""

from django.contrib import admin

from analysis.models import Score, ScoreSource


@admin.register(ScoreSource)
class ScoreSourceAdmin(admin.ModelAdmin):
    list_display = ["name", "kind", "created_at", "updated_at"]
    list_filter = ["kind"]
    search_fields = ["name"]


@admin.register(Score)
class ScoreAdmin(admin.ModelAdmin):
    """Scores change only by import (all-or-nothing, checked); here they are read."""

    list_display = ["source", "response", "item", "value"]
    list_filter = ["source"]
    search_fields = ["response__response_id", "item__item_id", "source__name"]
    raw_id_fields = ["response", "item"]

    def has_add_permission(self, request):
        return False

    def has_change_permission(self, request, obj=None):
        return False
