"""Pages of the analysis app, under the staff site's ``/manage/<slug>/``."""

from django.urls import path

from analysis import views

urlpatterns = [
    path("manage/<slug:slug>/scores", views.upload_scores, name="manage-batch-scores"),
    path("manage/<slug:slug>/report", views.report_page, name="manage-report"),
    path("manage/<slug:slug>/report/run", views.run_analysis, name="manage-report-run"),
    path("manage/<slug:slug>/report.json", views.report_json, name="manage-report-json"),
    # one CSV per table of the report: …/report/bundle_positions.csv is named
    # manage-report-bundle-positions
    *[
        path(
            f"manage/<slug:slug>/report/{table}.csv",
            views.report_table_csv,
            {"table": table},
            name="manage-report-" + table.replace("_", "-"),
        )
        for table in views.REPORT_TABLES
    ],
    path(
        "manage/<slug:slug>/report/figures.zip",
        views.report_figures_zip,
        name="manage-report-figures",
    ),
    path(
        "manage/<slug:slug>/report/figures/<slug:key>.<slug:fmt>",
        views.report_figure,
        name="manage-report-figure",
    ),
    path(
        "manage/<slug:slug>/report/scatter.svg",
        views.score_scatter,
        name="manage-report-scatter",
    ),
]
