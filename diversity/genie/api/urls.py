from django.urls import path

from diversity.genie.api import views

urlpatterns = [
    path(
        "genie/<slug:name>/comparison",
        views.GenieComparisonView.as_view(),
        name="api-genie-comparison",
    ),
    path(
        "genie/<slug:name>/genie.jsonl",
        views.GenieExportView.as_view(table="genie"),
        name="api-genie-genie-jsonl",
    ),
    path(
        "genie/<slug:name>/q_genie.jsonl",
        views.GenieExportView.as_view(table="q_genie"),
        name="api-genie-q-genie-jsonl",
    ),
]
