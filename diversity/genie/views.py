"""The Genie pages beyond every study type's (``diversity.genie.study``): a set's scores in
GENIE's own shape, ``/manage/genie/<name>/genie.jsonl`` and ``q_genie.jsonl``."""

from django.http import HttpRequest, StreamingHttpResponse
from django.shortcuts import get_object_or_404
from django.urls import path
from django.views.decorators.http import require_GET

from core.access import staff_page
from core.jobs.subject_pages import report_or_404
from diversity.genie.access import can_view_genie
from diversity.genie.core import exports
from diversity.genie.models import GenieSet
from diversity.genie.services.analyses import latest_report

GENIE_EXPORTS = {"genie": exports.genie_records, "q_genie": exports.q_genie_records}


@staff_page(can_view_genie)
@require_GET
def genie_export(request: HttpRequest, name: str, table: str) -> StreamingHttpResponse:
    """``genie.jsonl`` / ``q_genie.jsonl``: the LLM scores (``?source=human``: the human
    ones) in GENIE's own shape."""
    genie_set = get_object_or_404(GenieSet, name=name)
    _, report = report_or_404(latest_report(genie_set), f"Genie set {genie_set.name}")
    records = GENIE_EXPORTS[table](report, request.GET.get("source", "llm"))
    response = StreamingHttpResponse(
        exports.jsonl_lines(records), content_type="application/x-ndjson; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{genie_set.name}-{table}.jsonl"'
    return response


urlpatterns = [
    path(
        f"manage/genie/<slug:name>/{table}.jsonl",
        genie_export,
        {"table": table},
        name=f"manage-genie-{table.replace('_', '-')}-jsonl",
    )
    for table in GENIE_EXPORTS
]
