"""``load_demo`` (what ``bin/run`` loads) imports the shipped census with its human norms
and analyses it, once: a new user finds the census page ready."""

import io

import pytest
from django.core.management import call_command

from diversity.census.models import Census
from diversity.census.services.analyses import latest_report
from tests.staff import staff_client

pytestmark = pytest.mark.django_db


def test_load_demo_brings_the_analysed_census_once():
    out = io.StringIO()
    call_command("load_demo", stdout=out)
    call_command("load_demo", stdout=io.StringIO())
    assert "/manage/census/one-word-census/" in out.getvalue()
    census = Census.objects.get(name="one-word-census")
    assert census.answers.count() == 5456 and census.norms.count() == 20
    assert census.jobs.count() == 1  # the second run changed nothing
    _, report = latest_report(census)
    assert report["n_models"] == 44
    assert report["norms"]["published"]["n_model_more_concentrated"] == 18
    assert report["norms"]["computed"]["n_model_more_concentrated"] == 16
    html = staff_client("admin").get("/manage/census/one-word-census/").content.decode()
    assert html.count('<svg class="chart"') == 3
