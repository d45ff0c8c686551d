"""Pages of the corpora app, under the staff site's ``/manage/corpora/``."""

from django.urls import path

from diversity.corpora import downloads, views

urlpatterns = [
    path("manage/corpora/", views.corpus_list, name="manage-corpora-list"),
    path("manage/corpora/new", views.corpus_upload, name="manage-corpora-import"),
    path("manage/corpora/<slug:name>/", views.corpus_page, name="manage-corpus"),
    path(
        "manage/corpora/<slug:name>/embeddings",
        views.embeddings_upload,
        name="manage-corpus-embeddings",
    ),
    path(
        "manage/corpora/<slug:name>/embeddings/compute",
        views.embeddings_compute,
        name="manage-corpus-embeddings-compute",
    ),
    path("manage/corpora/<slug:name>/run", views.run_analysis, name="manage-corpus-run"),
    path(
        "manage/corpora/<slug:name>/batch",
        views.make_selection_batch,
        name="manage-corpus-batch",
    ),
    path(
        "manage/corpora/<slug:name>/report.json", downloads.report_json, name="manage-corpus-json"
    ),
    path(
        "manage/corpora/<slug:name>/figures.zip",
        downloads.report_figures_zip,
        name="manage-corpus-figures",
    ),
    path(
        "manage/corpora/<slug:name>/figure/<slug:key>.<slug:fmt>",
        downloads.report_figure,
        name="manage-corpus-figure",
    ),
    path(
        "manage/corpora/<slug:name>/tables/<slug:table>.csv",
        downloads.table_csv,
        name="manage-corpus-table",
    ),
    # A query id is percent-encoded whole in links (``/`` as %2F); the ids "." and ".." go
    # in ``?id=`` instead (diversity.corpora.templatetags.corpus_links).
    path(
        "manage/corpora/<slug:name>/query.json/<path:query_id>",
        views.query_json,
        name="manage-corpus-query-json",
    ),
    path(
        "manage/corpora/<slug:name>/query.json/",
        views.query_json,
        name="manage-corpus-query-json-by-parameter",
    ),
    path(
        "manage/corpora/<slug:name>/query/<path:query_id>",
        views.query_page,
        name="manage-corpus-query",
    ),
    path(
        "manage/corpora/<slug:name>/query/",
        views.query_page,
        name="manage-corpus-query-by-parameter",
    ),
]
