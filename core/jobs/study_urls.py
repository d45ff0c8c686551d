"""The URLs of every registered study type (``core.jobs.study_types``): its staff pages
(``pages``, included before the batches' ``/manage/<slug>/`` pages, which would take
``/manage/census/`` as a batch) and its API (``api``, under ``/api/v1/``).

Each name is the type's slug in a fixed pattern, so templates and tests name them alike:
``manage-<slug>-list``, ``manage-<slug>-upload``, ``manage-<slug>`` (a subject),
``manage-<slug>-run``, ``manage-<slug>-json``, ``manage-<slug>-<table>`` (a table's CSV),
``manage-<slug>-figures`` and ``manage-<slug>-figure`` (a type with figures),
``api-<slug>-analyses``, ``api-<slug>-report`` and, for a type that imports its subjects
through the API, ``api-<slug>-list``."""

from django.urls import path

from core.jobs.study_api import ReportView, StartAnalysisView
from core.jobs.study_list_api import SubjectListView
from core.jobs.study_types import study_types
from core.jobs.study_views import StudyViews


def page_urls(study) -> list:
    views = StudyViews(study)
    base = f"manage/{study.slug}/"
    subject = f"{base}<slug:name>/"
    patterns = [path(base, views.list, name=study.url_name("list"))]
    if views.upload is not None:
        patterns.append(path(f"{base}new", views.upload, name=study.url_name("upload")))
    patterns += [
        path(subject, views.page, name=study.url_name()),
        path(f"{subject}run", views.run, name=study.url_name("run")),
        path(f"{subject}report.json", views.report_json, name=study.url_name("json")),
    ]
    if study.figures is not None:
        patterns += [
            path(f"{subject}figures.zip", views.figures_zip, name=study.url_name("figures")),
            path(
                f"{subject}figure/<slug:key>.<slug:fmt>",
                views.figure,
                name=study.url_name("figure"),
            ),
        ]
    patterns += [
        path(f"{subject}{table}.csv", views.table_csv, {"table": table}, name=study.url_name(table))
        for table in study.table_names
    ]
    return [*patterns, *study.extra_urls]


def api_urls(study) -> list:
    subject = f"{study.slug}/<slug:name>/"
    listing = []
    if study.list_api is not None:
        view = SubjectListView.for_study(study).as_view()
        listing.append(path(f"{study.slug}/", view, name=f"api-{study.slug}-list"))
    return [
        *listing,
        path(
            f"{subject}analyses",
            StartAnalysisView.for_study(study).as_view(),
            name=f"api-{study.slug}-analyses",
        ),
        path(
            f"{subject}report",
            ReportView.for_study(study).as_view(),
            name=f"api-{study.slug}-report",
        ),
    ]


def pages() -> list:
    return [pattern for study in study_types() for pattern in page_urls(study)]


def api() -> list:
    return [pattern for study in study_types() for pattern in api_urls(study)]
