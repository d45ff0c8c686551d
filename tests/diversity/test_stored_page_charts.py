"""The census and Genie pages show the charts their analysis job drew and stored
(core.jobs.stored_charts): the first view of a page draws nothing. A report analysed before
charts were stored still gets them drawn on its first view."""

import dataclasses
import json

import pytest
from django.core.cache import cache

from core.jobs import study_types
from core.jobs.execution import job_files_dir
from core.jobs.stored_charts import FILES_KEY
from core.models import Job
from diversity.census.services.analyses import analyse_now as analyse_census
from diversity.census.services.analyses import analysis_params as census_params
from diversity.census.services.imports import import_census
from diversity.genie.services.analyses import analyse_now as analyse_genie
from diversity.genie.services.analyses import analysis_params as genie_params
from diversity.genie.services.imports import import_genie
from tests.diversity import genie_set as hand
from tests.diversity.test_census_pages import transcript
from tests.staff import staff_client

pytestmark = pytest.mark.django_db


def analysed_census():
    census = import_census(
        "stored",
        [
            transcript("alpha", {"tree": ["Oak", "Oak"], "color": ["Blue", "Red"]}),
            transcript("beta", {"tree": ["Pine", "Oak"], "color": ["Blue", "Blue"]}),
            transcript("gamma", {"tree": ["Birch", "Elm"], "color": ["Teal", "Blue"]}),
        ],
    )
    job = analyse_census(census, census_params(bootstrap=100))
    return job, f"/manage/census/{census.name}/"


def analysed_genie():
    genie_set = import_genie("stored", hand.upload(hand.jsonl()), filename="judgments.jsonl")
    job = analyse_genie(genie_set, genie_params(bootstrap=100))
    return job, f"/manage/genie/{genie_set.name}/"


CASES = [(analysed_census, "census"), (analysed_genie, "genie")]


@pytest.mark.parametrize("analysed, slug", CASES, ids=["census", "genie"])
def test_the_first_view_shows_the_charts_the_job_stored(
    analysed, slug, settings, tmp_path, monkeypatch
):
    settings.DATA_DIR = tmp_path
    job, url = analysed()
    assert job.state == Job.State.SUCCEEDED
    stored = json.loads((job_files_dir() / job.result["files"][FILES_KEY]).read_text())
    study = study_types.study_type(slug)
    assert [chart["key"] for chart in stored] == [
        chart["key"] for chart in study.charts(_report(job))
    ]

    def refuse(report):
        raise AssertionError("the page drew its charts")

    monkeypatch.setitem(study_types._TYPES, slug, dataclasses.replace(study, charts=refuse))
    cache.clear()
    page = staff_client("researcher").get(url).content.decode()
    assert stored and all(chart["svg"] in page for chart in stored)


@pytest.mark.parametrize("analysed, slug", CASES, ids=["census", "genie"])
def test_a_job_without_stored_charts_has_them_drawn_on_the_first_view(
    analysed, slug, settings, tmp_path
):
    settings.DATA_DIR = tmp_path
    job, url = analysed()
    Job.objects.filter(pk=job.pk).update(result={})  # as a job of an earlier version left it
    cache.clear()
    page = staff_client("researcher").get(url).content.decode()
    charts = study_types.study_type(slug).charts(_report(job))
    for chart in charts:
        assert f"<h3>{chart['title']}</h3>" in page or chart["title"] in page
    assert page.count("<svg") >= len(charts)


def _report(job: Job) -> dict:
    return json.loads((job_files_dir() / job.result_path).read_text())
