from django.urls import path

from annotation.api import exports, staff

urlpatterns = [
    # researchers and admins (token or staff session)
    path("batches/", staff.BatchListView.as_view(), name="api-batches"),
    path("batches/<slug:slug>/", staff.BatchDetailView.as_view(), name="api-batch"),
    path("batches/<slug:slug>/state", staff.BatchStateView.as_view(), name="api-batch-state"),
    path("batches/<slug:slug>/items", staff.BatchItemsView.as_view(), name="api-batch-items"),
    path("batches/<slug:slug>/import-jobs", staff.ImportJobView.as_view(), name="api-import-jobs"),
    path(
        "batches/<slug:slug>/progress", staff.BatchProgressView.as_view(), name="api-batch-progress"
    ),
    path(
        "batches/<slug:slug>/annotators",
        staff.BatchAnnotatorsView.as_view(),
        name="api-batch-annotators",
    ),
    path(
        "batches/<slug:slug>/annotators/<str:pseudonym>/exclude",
        staff.ExclusionView.as_view(),
        name="api-annotator-exclude",
    ),
    path(
        "batches/<slug:slug>/annotators/<str:pseudonym>/include",
        staff.ExclusionView.as_view(include=True),
        name="api-annotator-include",
    ),
    path("batches/<slug:slug>/history", staff.BatchHistoryView.as_view(), name="api-batch-history"),
    path("batches/<slug:slug>/export", exports.BatchExportView.as_view(), name="api-batch-export"),
    path(
        "batches/<slug:slug>/export-jobs", exports.ExportJobView.as_view(), name="api-export-jobs"
    ),
]
