from django.urls import path

from analysis.api import reports, views

urlpatterns = [
    path("scores", views.ScoreImportView.as_view(), name="api-scores"),
    path(
        "batches/<slug:slug>/score-sources",
        views.ScoreSourcesView.as_view(),
        name="api-batch-score-sources",
    ),
    path("batches/<slug:slug>/analyses", reports.StartAnalysisView.as_view(), name="api-analyses"),
    path("batches/<slug:slug>/report", reports.LatestReportView.as_view(), name="api-report"),
]
