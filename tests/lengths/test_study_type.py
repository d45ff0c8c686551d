"""Length statistics, a study type declared in one package (diversity.lengths), on every
surface the scaffold gives a type: the staff navigation and pages, the Run form, the
downloads, the API and ``manage.py analyze`` — with the refusals each must give."""

import csv
import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.test import Client

from core.models import Job
from diversity.corpora.services.imports import import_corpus
from tests.files import write_jsonl
from tests.staff import staff_client, staff_user, token_client

pytestmark = pytest.mark.django_db

TEXTS = {  # (query, model) -> the responses' texts
    ("q1", "alpha"): ["ab", "ab cd ef"],
    ("q1", "beta"): ["twelve chars"],
    ("q2", "alpha"): ["xyz"],
    ("q2", "beta"): ["a much longer answer of forty characters"],
}


@pytest.fixture
def corpus(tmp_path):
    rows = [
        {
            "query_id": query,
            "query": f"Question {query}?",
            "model": model,
            "sample": sample,
            "response_id": f"{query}-{model}-{sample}",
            "response": text,
        }
        for (query, model), texts in TEXTS.items()
        for sample, text in enumerate(texts, start=1)
    ]
    return import_corpus("pool", write_jsonl(tmp_path / "pool.jsonl", rows))


def _job() -> Job:
    return Job.objects.get(kind="length_statistics")


def test_the_pages_list_run_show_and_download(
    corpus, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.DATA_DIR = tmp_path
    client = staff_client("researcher")
    home = client.get("/manage/census/").content.decode()
    assert 'href="/manage/lengths/"' in home  # the navigation names every study type
    listing = client.get("/manage/lengths/")
    assert listing.status_code == 200 and 'data-subject="pool"' in listing.content.decode()
    assert "not yet" in listing.content.decode()
    page = client.get("/manage/lengths/pool/").content.decode()
    assert "No analysis yet" in page and 'name="tail"' in page

    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post("/manage/lengths/pool/run", {"tail": "50"})
    assert answer.status_code == 302
    job = _job()
    assert job.state == Job.State.SUCCEEDED and job.params == {"tail": 50}
    page = client.get("/manage/lengths/pool/").content.decode()
    assert 'data-model="alpha"' in page and 'data-model="beta"' in page
    assert "p50 characters" in page

    models = _csv(client.get("/manage/lengths/pool/models.csv"))
    alpha = next(row for row in models if row["model"] == "alpha")
    assert float(alpha["mean_characters"]) == pytest.approx((2 + 8 + 3) / 3)
    assert float(alpha["median_words"]) == 1.0
    queries = {row["query_id"]: row for row in _csv(client.get("/manage/lengths/pool/queries.csv"))}
    assert queries["q2"]["longest_model"] == "beta" and queries["q1"]["n_responses"] == "3"
    report = json.loads(b"".join(client.get("/manage/lengths/pool/report.json").streaming_content))
    assert report["settings"] == {"tail": 50} and report["n_responses"] == 5
    assert client.get("/manage/lengths/pool/nope.csv").status_code == 404


def test_a_bad_setting_on_the_page_starts_nothing(corpus):
    client = staff_client("researcher")
    answer = client.post(
        "/manage/lengths/pool/run", {"tail": "100"}, HTTP_ACCEPT="application/json"
    )
    assert answer.status_code == 400 and "Tail percentile" in answer.json()["error"]
    assert not Job.objects.exists()


def test_who_may_see_and_run(corpus):
    roleless = Client()
    roleless.force_login(staff_user(None, "no-role"))
    for url in ("/manage/lengths/", "/manage/lengths/pool/"):
        assert roleless.get(url).status_code == 403
        assert Client().get(url).status_code == 302  # to the login page
    assert roleless.post("/manage/lengths/pool/run", {"tail": "90"}).status_code == 403
    assert roleless.post("/api/v1/lengths/pool/analyses", {}).status_code in (401, 403)
    assert not Job.objects.exists()
    assert staff_client("researcher").get("/manage/lengths/nope/").status_code == 404


def test_the_api_starts_an_analysis_and_answers_its_report(
    corpus, settings, tmp_path, django_capture_on_commit_callbacks
):
    settings.DATA_DIR = tmp_path
    client = token_client("researcher")
    before = client.get("/api/v1/lengths/pool/report")
    assert before.status_code == 404 and "no finished analysis" in before.json()["detail"]
    refused = client.post(
        "/api/v1/lengths/pool/analyses", {"tail": 0}, content_type="application/json"
    )
    assert refused.status_code == 400 and "tail" in json.dumps(refused.json())
    wrong = client.post(
        "/api/v1/lengths/pool/analyses", {"tail": "many"}, content_type="application/json"
    )
    assert wrong.status_code == 400 and "tail" in json.dumps(wrong.json())
    with django_capture_on_commit_callbacks(execute=True):
        started = client.post(
            "/api/v1/lengths/pool/analyses", {"tail": 75}, content_type="application/json"
        )
    assert started.status_code == 202
    report = client.get("/api/v1/lengths/pool/report").json()
    assert report["settings"]["tail"] == 75
    assert report["per_model"]["beta"]["n_responses"] == 2
    assert client.post("/api/v1/lengths/nope/analyses", {}).status_code == 404


def test_the_schema_describes_the_type(corpus):
    schema = token_client("researcher").get("/api/schema/?format=json").json()
    assert "/api/v1/lengths/{name}/analyses" in schema["paths"]
    body = schema["components"]["schemas"]["LengthsAnalysisRequest"]
    assert body["properties"]["tail"]["type"] == "integer"


def test_the_command_analyses_with_a_setting(corpus, settings, tmp_path, capsys):
    settings.DATA_DIR = tmp_path
    out = tmp_path / "lengths.json"
    call_command("analyze_study", "lengths", "pool", "--set", "tail=80", "--json", str(out))
    printed = capsys.readouterr().out
    assert "Analysed the lengths of corpus pool: 5 responses of 2 models" in printed
    assert json.loads(out.read_text())["settings"] == {"tail": 80}
    assert _job().params == {"tail": 80}


@pytest.mark.parametrize(
    "arguments, message",
    [
        (["nope", "pool"], "no study type 'nope'"),
        (["lengths", "nope"], "corpus 'nope' does not exist"),
        (["lengths", "pool", "--set", "depth=3"], "settings: tail"),
        (["lengths", "pool", "--set", "tail"], "expected SETTING=VALUE"),
        (["lengths", "pool", "--set", "tail=abc"], "--set tail"),
        (["lengths", "pool", "--set", "tail=100"], "tail: must be between 1 and 99"),
    ],
)
def test_the_command_refuses_plainly(corpus, arguments, message):
    with pytest.raises(CommandError, match=message):
        call_command("analyze_study", *arguments)
    assert not Job.objects.exists()


def test_the_generic_command_serves_the_census_too(settings, tmp_path, capsys):
    from diversity.census.services.imports import import_census
    from tests.diversity.test_census_pages import transcript

    settings.DATA_DIR = tmp_path
    import_census(
        "tiny", [transcript("alpha", {"tree": ["Oak"]}), transcript("beta", {"tree": ["Elm"]})]
    )
    call_command("analyze_study", "census", "tiny", "--set", "bootstrap=20", "--set", "seed=3")
    assert "Analysed census tiny" in capsys.readouterr().out
    assert Job.objects.get(kind="census_analysis").params["bootstrap"] == 20


def _csv(response) -> list[dict]:
    text = b"".join(response.streaming_content).decode("utf-8")
    return list(csv.DictReader(io.StringIO(text)))


def test_a_misspelt_setting_is_refused_not_run_at_its_default(corpus):
    client = token_client("researcher")
    answer = client.post(
        "/api/v1/lengths/pool/analyses", {"tial": 95}, content_type="application/json"
    )
    assert answer.status_code == 400 and "tial" in json.dumps(answer.json())
    assert "settings: tail" in json.dumps(answer.json())
    assert not Job.objects.exists()


@pytest.mark.parametrize("slug", ["lengths", "census", "genie", "corpora"])
def test_a_batch_may_not_take_a_study_types_page(slug):
    from annotation.services.batches import create_batch
    from core.errors import InvalidInput

    with pytest.raises(InvalidInput, match="taken by a page of the site"):
        create_batch(slug=slug, kind="absolute")


def test_a_declaration_the_scaffold_cannot_serve_stops_the_start_up():
    import dataclasses

    from django import forms

    from core.jobs.study_types import register_study_type, study_type

    lengths = study_type("lengths")

    class Clashing(forms.Form):
        name = forms.CharField()

    wrong = {
        "slug": "Bad Slug",
        "upload": lambda request, actor: None,  # and no can_import
        "tables": {"run": lambda report: ([], [])},
        "run_form": Clashing,
    }
    with pytest.raises(ValueError) as refused:
        register_study_type(dataclasses.replace(lengths, **wrong))
    message = str(refused.value)
    for expected in ("slug:", "upload needs can_import", "table 'run'", "field 'name'"):
        assert expected in message
    assert study_type("Bad Slug") is None


def test_the_declarations_of_files_and_imports_are_checked_too():
    import dataclasses

    from core.jobs.study_types import register_study_type, study_type

    lengths = study_type("lengths")
    wrong = {
        "slug": "wrong-files",
        "import_job_kind": "corpus_import",  # and no upload to start it
        "job_tables": {"models": lambda subject, job, params: ([], [])},  # also a report table
        "listed_tables": ("nope",),
        "figure_tables": {"curve": "absent"},
    }
    with pytest.raises(ValueError) as refused:
        register_study_type(dataclasses.replace(lengths, **wrong))
    message = str(refused.value)
    for expected in (
        "import_job_kind needs upload",
        "both the report's and kept beside it",
        "listed table 'nope'",
        "figure 'curve' draws table 'absent'",
    ):
        assert expected in message
    assert study_type("wrong-files") is None


def test_the_command_writes_every_table_as_csv(corpus, settings, tmp_path, capsys):
    settings.DATA_DIR = tmp_path
    folder = tmp_path / "tables"
    call_command("analyze_study", "lengths", "pool", "--csv", str(folder))
    assert f"tables written to {folder}" in capsys.readouterr().out
    assert sorted(path.name for path in folder.iterdir()) == ["pool-models.csv", "pool-queries.csv"]
    models = list(csv.DictReader(open(folder / "pool-models.csv", encoding="utf-8")))
    assert [row["model"] for row in models] == ["alpha", "beta"]
    assert [int(row["n_responses"]) for row in models] == [3, 2]


def test_the_command_says_where_it_cannot_write_the_tables(corpus, settings, tmp_path):
    settings.DATA_DIR = tmp_path
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    with pytest.raises(CommandError, match="--csv: cannot write"):
        call_command("analyze_study", "lengths", "pool", "--csv", str(blocker / "tables"))


def test_set_is_read_as_settings_of_the_analysis_not_as_djangos_own():
    """On the command line Django reads the parsed ``settings`` option as the settings
    module's path before the command runs: ``--set`` must not be stored under that name."""
    from django.core.management.base import handle_default_options

    from core.management.commands.analyze_study import Command

    parser = Command().create_parser("manage.py", "analyze_study")
    options = parser.parse_args(["lengths", "pool", "--set", "tail=80", "--csv", "out"])
    handle_default_options(options)  # raised TypeError when --set went to "settings"
    assert options.settings is None
    assert options.set_values == ["tail=80"] and options.csv_dir == "out"


def test_csv_writes_no_table_when_one_is_no_longer_kept(corpus, settings, tmp_path, monkeypatch):
    import dataclasses

    from django.http import Http404

    from core.jobs import study_types

    def gone(subject, job, params):
        raise Http404("The per-query table of this analysis is no longer kept.")

    lengths = study_types.study_type("lengths")
    monkeypatch.setitem(
        study_types._TYPES, "lengths", dataclasses.replace(lengths, job_tables={"kept": gone})
    )
    settings.DATA_DIR = tmp_path
    folder = tmp_path / "tables"
    with pytest.raises(CommandError, match="--csv: The per-query table .* no longer kept"):
        call_command("analyze_study", "lengths", "pool", "--csv", str(folder))
    assert not folder.exists()  # not half the tables
