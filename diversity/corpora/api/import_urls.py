"""API routes that bring data into corpora: response pools and their embeddings."""

from django.urls import path

from diversity.corpora.api import imports

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
]
