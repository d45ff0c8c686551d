"""Pages of the Genie app, under the staff site's ``/manage/genie/``."""

from django.urls import path

from diversity.genie import views

urlpatterns = [
    path("manage/genie/", views.genie_list, name="manage-genie-list"),
    path("manage/genie/new", views.genie_upload, name="manage-genie-upload"),
    path("manage/genie/<slug:name>/", views.genie_page, name="manage-genie"),
    path("manage/genie/<slug:name>/run", views.run_genie, name="manage-genie-run"),
    path("manage/genie/<slug:name>/report.json", views.report_json, name="manage-genie-json"),
    path(
        "manage/genie/<slug:name>/documents.csv",
        views.report_table_csv,
        {"table": "documents"},
        name="manage-genie-documents",
    ),
    path(
        "manage/genie/<slug:name>/features.csv",
        views.report_table_csv,
        {"table": "features"},
        name="manage-genie-features",
    ),
    path(
        "manage/genie/<slug:name>/agreement.csv",
        views.report_table_csv,
        {"table": "agreement"},
        name="manage-genie-agreement",
    ),
    path(
        "manage/genie/<slug:name>/comparisons.csv",
        views.report_table_csv,
        {"table": "comparisons"},
        name="manage-genie-comparisons",
    ),
    path(
        "manage/genie/<slug:name>/questions.csv",
        views.report_table_csv,
        {"table": "questions"},
        name="manage-genie-questions",
    ),
    path(
        "manage/genie/<slug:name>/genie.jsonl",
        views.genie_export,
        {"table": "genie"},
        name="manage-genie-genie-jsonl",
    ),
    path(
        "manage/genie/<slug:name>/q_genie.jsonl",
        views.genie_export,
        {"table": "q_genie"},
        name="manage-genie-q-genie-jsonl",
    ),
]
