"""API routes that read corpora and select from them (the import routes are in ``import_urls``;
the analyses and the report are the study type's, ``core.jobs.study_urls``)."""

from django.urls import path

from diversity.corpora.api import views

urlpatterns = [
    path("corpora/", views.CorpusListView.as_view(), name="api-corpora-list"),
    path("corpora/<slug:name>", views.CorpusDetailView.as_view(), name="api-corpus"),
    path(
        "corpora/<slug:name>/queries.csv",
        views.CorpusQueryTableView.as_view(),
        name="api-corpus-queries",
    ),
    path(
        "corpora/<slug:name>/queries/<path:query_id>/projection",
        views.CorpusQueryProjectionView.as_view(),
        name="api-corpus-query-projection",
    ),
    path(
        "corpora/<slug:name>/batches", views.CorpusBatchesView.as_view(), name="api-corpus-batches"
    ),
]
