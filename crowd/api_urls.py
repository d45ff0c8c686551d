"""The crowd app's API paths, under ``/api/v1/``."""

from django.urls import path

from crowd import api

urlpatterns = [
    path("batches/<slug:slug>/crowd/review", api.ReviewView.as_view(), name="api-crowd-review"),
    path("batches/<slug:slug>/crowd/sync", api.SyncView.as_view(), name="api-crowd-sync"),
    path("batches/<slug:slug>/crowd/bonus", api.BonusView.as_view(), name="api-crowd-bonus"),
    path("batches/<slug:slug>/crowd/places", api.PlacesView.as_view(), name="api-crowd-places"),
    path(
        "batches/<slug:slug>/crowd/fair-pay", api.FairPayView.as_view(), name="api-crowd-fair-pay"
    ),
]
