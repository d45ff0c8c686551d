"""The ratings analysis is refused up front for kinds that have none (short text answers,
answer similarity: their study types analyse them), on the page and through the API, and
the page says where their analysis is instead of offering a run that can only fail."""

import pytest

from core.models import Job
from tests.factories import make_batch
from tests.staff import staff_client, token_client

pytestmark = pytest.mark.django_db

KINDS_WITHOUT_RATINGS = ["short_text", "similarity"]


@pytest.mark.parametrize("kind", KINDS_WITHOUT_RATINGS)
def test_the_page_explains_instead_of_offering_a_run(kind):
    batch = make_batch(kind=kind, n_items=2)
    html = staff_client("researcher").get(f"/manage/{batch.slug}/report").content.decode()
    assert 'id="no-ratings-analysis"' in html
    assert "One-Word Census" in html and "Genie" in html
    assert 'id="run-card"' not in html and 'name="bootstrap"' not in html


@pytest.mark.parametrize("kind", KINDS_WITHOUT_RATINGS)
def test_a_run_is_refused_before_any_job_starts(kind):
    batch = make_batch(kind=kind, n_items=2)
    page = staff_client("researcher")
    url = f"/manage/{batch.slug}/report/run"
    answer = page.post(url, {"bootstrap": "20", "seed": "0"}, HTTP_ACCEPT="application/json")
    assert answer.status_code == 400
    assert f"does not apply to {kind} batches" in answer.json()["error"]
    followed = page.post(url, {"bootstrap": "20", "seed": "0"}, follow=True)
    assert f"Analysis not started — batch: the ratings analysis does not apply to {kind}" in (
        followed.content.decode()
    )
    api = token_client("researcher").post(
        f"/api/v1/batches/{batch.slug}/analyses",
        data={"bootstrap": 20},
        content_type="application/json",
    )
    assert api.status_code == 400 and api.json()["field"] == "batch"
    assert not Job.objects.filter(kind="analysis").exists()


@pytest.mark.parametrize("kind", ["absolute", "pairwise"])
def test_kinds_with_ratings_are_still_offered_the_run(kind):
    batch = make_batch(kind=kind, n_items=2)
    html = staff_client("researcher").get(f"/manage/{batch.slug}/report").content.decode()
    assert 'id="run-card"' in html and 'id="no-ratings-analysis"' not in html
