"""The crowdworker's pages and API calls: the busiest requests the platform serves, so
``config/urls.py`` matches them before anything else (a path is tried against each pattern
in order until one matches)."""

from django.urls import path

from annotation.api import worker as worker_api
from annotation.views import worker

urlpatterns = [
    # the rating page's calls (session opened by the entry page)
    path("api/v1/work/<slug:slug>/next", worker_api.NextItemView.as_view(), name="api-work-next"),
    path(
        "api/v1/assignments/<str:assignment_id>/label",
        worker_api.SubmitLabelView.as_view(),
        name="api-assignment-label",
    ),
    path(
        "api/v1/assignments/<str:assignment_id>/heartbeat",
        worker_api.HeartbeatView.as_view(),
        name="api-assignment-heartbeat",
    ),
    # the study link and the pages around the rating page
    path("work/<slug:slug>/", worker.entry, name="work-entry"),
    path("work/<slug:slug>/consent", worker.consent, name="work-consent"),
    path("work/<slug:slug>/questionnaire", worker.questionnaire, name="work-questionnaire"),
    path("work/<slug:slug>/switch", worker.switch_browser, name="work-switch"),
    path("work/<slug:slug>/task", worker.task, name="work-task"),
    path("jsi18n/<str:language>/", worker.script_catalog, name="javascript-catalog"),
]
