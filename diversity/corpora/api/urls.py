"""API routes of the corpora: importing pools and embeddings, reading corpora and selecting
from them (the analyses and the report are the study type's, ``core.jobs.study_urls``).
The import routes come first: ``corpora/import-jobs`` would otherwise be read as a corpus
named "import-jobs"."""

from django.urls import path

from diversity.corpora.api import imports, views

urlpatterns = [
    path("corpora/import-jobs", imports.CorpusImportView.as_view(), name="api-corpus-import-jobs"),
    path(
        "corpora/<slug:name>/embeddings/import-jobs",
        imports.CorpusEmbeddingImportView.as_view(),
        name="api-corpus-embedding-import-jobs",
    ),
    path(
        "corpora/<slug:name>/embeddings/compute-jobs",
        imports.CorpusEmbeddingComputeView.as_view(),
        name="api-corpus-embedding-compute-jobs",
    ),
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
