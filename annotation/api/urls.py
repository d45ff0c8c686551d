from django.urls import path

from annotation.api import worker

urlpatterns = [
    path("work/<slug:slug>/next", worker.NextItemView.as_view(), name="api-work-next"),
    path(
        "assignments/<str:assignment_id>/label",
        worker.SubmitLabelView.as_view(),
        name="api-assignment-label",
    ),
]
