from django.urls import path

from core.api import jobs

urlpatterns = [
    path("jobs/<uuid:job_id>", jobs.JobDetailView.as_view(), name="api-job"),
    path("jobs/<uuid:job_id>/download", jobs.JobDownloadView.as_view(), name="api-job-download"),
]
