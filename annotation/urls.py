from django.urls import path

from annotation.views import worker

urlpatterns = [
    path("work/<slug:slug>/", worker.entry, name="work-entry"),
    path("work/<slug:slug>/consent", worker.consent, name="work-consent"),
    path("work/<slug:slug>/task", worker.task, name="work-task"),
]
