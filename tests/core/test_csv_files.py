"""Every CSV the platform produces goes through ``core.csv_files``: a formula-bearing
name is written as text in the corpus figures zip's tables, the invitations CSV (page and
command) and the exports, and invitation links carry their token URL-encoded."""

import csv
import io
import zipfile
from urllib.parse import parse_qs, urlsplit

import pytest
from django.core.management import call_command

from annotation.services.invitations import invitee_of
from core import csv_files
from tests.corpora.analysis_corpora import make_corpus, named_model_rows, run_analysis
from tests.factories import make_batch
from tests.staff import staff_client

FORMULA = '=HYPERLINK("https://evil.example/","click")'


def rows_of(text: str) -> list[list[str]]:
    return list(csv.reader(io.StringIO(text)))


def test_the_writer_neutralises_formulas_and_keeps_numbers():
    text = csv_files.table_text(["name", "score"], [[FORMULA, -1.5], ["@SUM(A1)", None]])
    assert rows_of(text) == [["name", "score"], ["'" + FORMULA, "-1.5"], ["'@SUM(A1)", ""]]
    assert text.endswith("\r\n")


@pytest.mark.django_db
def test_the_figures_zip_tables_escape_a_formula_model_name():
    run_analysis(make_corpus("formula", named_model_rows(FORMULA)), bootstrap=20)
    answer = staff_client("researcher").get("/manage/corpora/formula/figures.zip")
    archive = zipfile.ZipFile(io.BytesIO(answer.content))
    tables = [name for name in archive.namelist() if name.endswith(".csv")]
    assert {"formula-models.csv", "formula-histogram.csv", "formula-inter-model.csv"} <= set(tables)
    for name in tables:
        cells = [cell for row in rows_of(archive.read(name).decode()) for cell in row]
        assert not any(cell.startswith(csv_files.FORMULA_PREFIXES[:1]) for cell in cells), name
        if name == "formula-models.csv":
            assert "'" + FORMULA in cells  # the name is kept, as text


PREFIX = "=cmd|' /C calc'!A0 a&b c#d"


@pytest.mark.django_db
def test_the_invitations_csv_escapes_the_prefix_and_url_encodes_the_token(tmp_path):
    batch = make_batch(n_items=1, invitations_required=True)
    page = staff_client("admin").post(
        f"/manage/{batch.slug}/invitations", {"count": "2", "prefix": PREFIX}
    )
    assert page.status_code == 200
    output = tmp_path / "invitations.csv"
    call_command(
        "invitations", batch.slug, "--count", "2", "--prefix", PREFIX,
        "--base-url", "https://rate.example.org:8443", "--output", str(output),
    )  # fmt: skip
    for text in (page.content.decode(), output.read_text()):
        header, *rows = rows_of(text)
        assert header == ["invitee", "link"] and len(rows) == 2
        for invitee, link in rows:
            assert invitee.startswith("'=cmd")  # text in a spreadsheet, not a formula
            parts = urlsplit(link)
            assert "#" not in link and " " not in link and parts.fragment == ""
            [token] = parse_qs(parts.query)["invite"]
            assert invitee_of(batch, token) == invitee[1:]
