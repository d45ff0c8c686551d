from django.urls import path

from crowd import views

urlpatterns = [
    path("hooks/prolific/", views.prolific_webhook, name="hooks-prolific"),
    path("manage/<slug:slug>/review", views.review_page, name="manage-batch-review"),
]
