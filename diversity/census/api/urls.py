from django.urls import path

from diversity.census.api import views

urlpatterns = [
    path("census/", views.CensusListView.as_view(), name="api-census-list"),
    path(
        "census/<slug:name>/analyses",
        views.StartCensusAnalysisView.as_view(),
        name="api-census-analyses",
    ),
    path("census/<slug:name>/report", views.CensusReportView.as_view(), name="api-census-report"),
]
