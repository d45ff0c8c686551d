"""The report's figures are drawn once, by the analysis job, and "Download figures" sends
the stored zip (analysis.figure_files); a score import since, or a report analysed before
figures were stored, has them drawn again on the next download, and the page says so."""

import io
import zipfile

import pytest

from analysis import plots
from analysis.figure_files import FILES_KEY
from analysis.services.analyses import latest_report
from core.jobs.execution import job_files_dir
from core.models import Job
from tests.analysis.test_report_page import add_sources, analysed_batch
from tests.staff import staff_client

pytestmark = [pytest.mark.django_db, pytest.mark.slow]


def downloaded(response) -> zipfile.ZipFile:
    assert response.status_code == 200 and response["Content-Type"] == "application/zip"
    return zipfile.ZipFile(io.BytesIO(b"".join(response.streaming_content)))


def no_drawing(monkeypatch):
    def refuse(self, fmt):
        raise AssertionError("a figure was drawn on download")

    monkeypatch.setattr(plots.Drawing, "file", refuse)


@pytest.fixture(autouse=True)
def figures_in_job(settings):
    settings.ANALYSIS_FIGURES_IN_JOB = True  # the production default, under test here


@pytest.fixture
def researcher(settings, tmp_path):
    settings.DATA_DIR = tmp_path  # the jobs folder of this test alone
    return staff_client("researcher")


def test_the_job_stores_the_figures_and_the_download_only_sends_them(researcher, monkeypatch):
    batch = analysed_batch()
    job, _ = latest_report(batch)
    stored = job_files_dir() / job.result["files"][FILES_KEY]
    assert stored.exists()
    assert (job_files_dir() / job.result["files"]["charts"]).exists()  # the page's, too
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert 'id="download-figures" data-figures="ready"' in page

    no_drawing(monkeypatch)
    response = researcher.get(f"/manage/{batch.slug}/report/figures.zip")
    assert f'filename="{batch.slug}-figures.zip"' in response["Content-Disposition"]
    archive = downloaded(response)
    assert archive.read("captions.txt") == zipfile.ZipFile(stored).read("captions.txt")
    names = set(archive.namelist())
    for key in ("correlations", "entropy", "agreement", "scatter"):
        assert {f"{batch.slug}-{key}.svg", f"{batch.slug}-{key}.pdf"} <= names
    one = researcher.get(f"/manage/{batch.slug}/report/figures/entropy.svg")
    assert one.content == archive.read(f"{batch.slug}-entropy.svg")
    assert researcher.get(f"/manage/{batch.slug}/report/figures/nope.pdf").status_code == 404


def test_a_score_import_since_the_analysis_has_the_figures_drawn_again(researcher):
    batch = analysed_batch(sources=[("rm-alpha", "reward_model")])
    before = downloaded(researcher.get(f"/manage/{batch.slug}/report/figures.zip"))
    scatter_before = before.read(f"{batch.slug}-scatter.svg").decode()
    assert "rm-alpha" in scatter_before and "judge-late" not in scatter_before

    add_sources(batch, [("judge-late", "judge")])  # the scatter shows scores as they are now
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert 'data-figures="draw"' in page and 'id="figures-progress"' in page
    after = downloaded(researcher.get(f"/manage/{batch.slug}/report/figures.zip"))
    assert "judge-late" in after.read(f"{batch.slug}-scatter.svg").decode()
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert 'data-figures="ready"' in page  # drawn once more, then stored


def test_a_report_from_before_stored_figures_gets_them_on_its_first_download(
    researcher, monkeypatch
):
    batch = analysed_batch()
    job, _ = latest_report(batch)
    (job_files_dir() / job.result["files"][FILES_KEY]).unlink()
    Job.objects.filter(pk=job.pk).update(result={"n_items": job.result["n_items"]})
    page = researcher.get(f"/manage/{batch.slug}/report").content.decode()
    assert 'data-figures="draw"' in page
    one = researcher.get(f"/manage/{batch.slug}/report/figures/entropy.pdf")
    assert one.status_code == 200 and one.content.startswith(b"%PDF-")  # drawn alone
    job.refresh_from_db()
    assert "files" not in job.result  # the zip waits for its own download
    assert researcher.get(f"/manage/{batch.slug}/report/figures/nope.pdf").status_code == 404

    first = downloaded(researcher.get(f"/manage/{batch.slug}/report/figures.zip"))
    job.refresh_from_db()
    assert (job_files_dir() / job.result["files"][FILES_KEY]).exists()
    assert job.result["n_items"] == 12  # the summary is kept beside the new file
    no_drawing(monkeypatch)
    second = downloaded(researcher.get(f"/manage/{batch.slug}/report/figures.zip"))
    assert sorted(first.namelist()) == sorted(second.namelist())
    assert all(first.read(name) == second.read(name) for name in first.namelist())


def test_with_figures_left_to_the_download_the_job_draws_none_and_the_download_does(
    researcher, settings
):
    settings.ANALYSIS_FIGURES_IN_JOB = False
    batch = analysed_batch()
    job = Job.objects.filter(kind="analysis").latest("created_at")
    assert "figures" not in job.result["files"] and "charts" in job.result["files"]
    archive = downloaded(researcher.get(f"/manage/{batch.slug}/report/figures.zip"))
    assert any(name.endswith(".pdf") for name in archive.namelist())
    job.refresh_from_db()
    assert "figures" in job.result["files"]  # drawn once, kept for the next download
