"""Pages of the census app, under the staff site's ``/manage/census/``."""

from django.urls import path

from diversity.census import views

urlpatterns = [
    path("manage/census/", views.census_list, name="manage-census-list"),
    path("manage/census/new", views.census_upload, name="manage-census-upload"),
    path("manage/census/<slug:name>/", views.census_page, name="manage-census"),
    path("manage/census/<slug:name>/run", views.run_census, name="manage-census-run"),
    path("manage/census/<slug:name>/report.json", views.report_json, name="manage-census-json"),
    path(
        "manage/census/<slug:name>/models.csv",
        views.report_table_csv,
        {"table": "models"},
        name="manage-census-models",
    ),
    path(
        "manage/census/<slug:name>/categories.csv",
        views.report_table_csv,
        {"table": "categories"},
        name="manage-census-categories",
    ),
]
