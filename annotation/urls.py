from django.urls import path

from annotation.views import item_review, staff_annotators, staff_pages

urlpatterns = [
    # admin pages for project admins and researchers (login + role)
    path("manage/", staff_pages.batch_list, name="manage-batches"),
    path("manage/new", staff_pages.batch_new, name="manage-batch-new"),
    path("manage/<slug:slug>/", staff_pages.batch_detail, name="manage-batch"),
    path("manage/<slug:slug>/edit", staff_pages.batch_edit, name="manage-batch-edit"),
    path("manage/<slug:slug>/state", staff_pages.batch_state, name="manage-batch-state"),
    path("manage/<slug:slug>/items", staff_pages.batch_upload, name="manage-batch-items"),
    path("manage/<slug:slug>/preview", staff_pages.batch_preview, name="manage-batch-preview"),
    path(
        "manage/<slug:slug>/annotators", staff_annotators.annotator_list, name="manage-annotators"
    ),
    path(
        "manage/<slug:slug>/annotators/exclude-group",
        staff_annotators.annotators_exclude_group,
        name="manage-annotators-exclude-group",
    ),
    path("manage/<slug:slug>/item", item_review.item_lookup, name="manage-item-lookup"),
    # item ids are the researchers' own: any character but a slash's meaning is kept
    path("manage/<slug:slug>/item/<path:item_id>", item_review.item_detail, name="manage-item"),
    path("manage/<slug:slug>/history", staff_pages.batch_history, name="manage-batch-history"),
    path(
        "manage/<slug:slug>/invitations",
        staff_pages.batch_invitations,
        name="manage-batch-invitations",
    ),
    path(
        "manage/<slug:slug>/annotators/<str:pseudonym>/exclude",
        staff_annotators.annotator_exclude,
        name="manage-annotator-exclude",
    ),
    path(
        "manage/<slug:slug>/annotators/<str:pseudonym>/include",
        staff_annotators.annotator_include,
        name="manage-annotator-include",
    ),
]
