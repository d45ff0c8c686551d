from django.urls import path

from diversity.census.api import views

urlpatterns = [
    path("census/", views.CensusListView.as_view(), name="api-census-list"),
]
