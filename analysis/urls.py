"""Pages of the analysis app, under the staff site's ``/manage/<slug>/``."""

from django.urls import path

from analysis import views

urlpatterns = [
    path("manage/<slug:slug>/scores", views.upload_scores, name="manage-batch-scores"),
    path("manage/<slug:slug>/report", views.report_page, name="manage-report"),
    path("manage/<slug:slug>/report/run", views.run_analysis, name="manage-report-run"),
    path("manage/<slug:slug>/report.json", views.report_json, name="manage-report-json"),
    path(
        "manage/<slug:slug>/report/items.csv",
        views.report_table_csv,
        {"table": "items"},
        name="manage-report-items",
    ),
    path(
        "manage/<slug:slug>/report/correlations.csv",
        views.report_table_csv,
        {"table": "correlations"},
        name="manage-report-correlations",
    ),
    path(
        "manage/<slug:slug>/report/annotators.csv",
        views.report_table_csv,
        {"table": "annotators"},
        name="manage-report-annotators",
    ),
    path(
        "manage/<slug:slug>/report/bundle_positions.csv",
        views.report_table_csv,
        {"table": "bundle_positions"},
        name="manage-report-bundle-positions",
    ),
    path(
        "manage/<slug:slug>/report/bundle_concordance.csv",
        views.report_table_csv,
        {"table": "bundle_concordance"},
        name="manage-report-bundle-concordance",
    ),
    path(
        "manage/<slug:slug>/report/bundle_decomposition.csv",
        views.report_table_csv,
        {"table": "bundle_decomposition"},
        name="manage-report-bundle-decomposition",
    ),
    path(
        "manage/<slug:slug>/report/bundle_participants.csv",
        views.report_table_csv,
        {"table": "bundle_participants"},
        name="manage-report-bundle-participants",
    ),
    path(
        "manage/<slug:slug>/report/categories.csv",
        views.report_table_csv,
        {"table": "categories"},
        name="manage-report-categories",
    ),
    path(
        "manage/<slug:slug>/report/category_correlations.csv",
        views.report_table_csv,
        {"table": "category_correlations"},
        name="manage-report-category-correlations",
    ),
    path(
        "manage/<slug:slug>/report/category_annotators.csv",
        views.report_table_csv,
        {"table": "category_annotators"},
        name="manage-report-category-annotators",
    ),
    path(
        "manage/<slug:slug>/report/rankings.csv",
        views.report_table_csv,
        {"table": "rankings"},
        name="manage-report-rankings",
    ),
    path(
        "manage/<slug:slug>/report/win_probability.csv",
        views.report_table_csv,
        {"table": "win_probability"},
        name="manage-report-win-probability",
    ),
    path(
        "manage/<slug:slug>/report/competence.csv",
        views.report_table_csv,
        {"table": "competence"},
        name="manage-report-competence",
    ),
    path(
        "manage/<slug:slug>/report/calibration.csv",
        views.report_table_csv,
        {"table": "calibration"},
        name="manage-report-calibration",
    ),
    path(
        "manage/<slug:slug>/report/category_rankings.csv",
        views.report_table_csv,
        {"table": "category_rankings"},
        name="manage-report-category-rankings",
    ),
    path(
        "manage/<slug:slug>/report/category_calibration.csv",
        views.report_table_csv,
        {"table": "category_calibration"},
        name="manage-report-category-calibration",
    ),
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
