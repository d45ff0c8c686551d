"""The ``corpus_analysis`` job and ``manage.py analyze_corpus``: known answers on a hand-made
corpus, the report equal to the pure pipeline's on the same arrays, the lexical basis, the
per-query table and typicality files, and the command's files and errors."""

import csv
import json
import math

import numpy as np
import pytest
from django.core.management import CommandError, call_command

from diversity.corpora.services.analyses import (
    QUERY_COLUMNS,
    analysis_params,
    job_file,
    latest_analysis,
    typicality_of,
)
from diversity.corpora.storage import open_embeddings
from diversity.homogeneity.pipeline import AnalysisSettings, analyse_corpus, pools_from_arrays
from diversity.homogeneity.report import analysis_report
from tests.corpora.analysis_corpora import make_corpus, random_rows, run_analysis

pytestmark = pytest.mark.django_db


def analysed(corpus, **params):
    job = run_analysis(corpus, **params)
    return job, latest_analysis(corpus)[1]


def close(a, b, tolerance=1e-9) -> bool:
    """Equal JSON values, numbers to ``tolerance``."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k], tolerance) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y, tolerance) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return math.isclose(a, b, rel_tol=tolerance, abs_tol=tolerance)
    return a == b


# --------------------------------------------------------------------------- known answers


def test_hand_made_corpus_gives_the_known_answers():
    corpus = make_corpus("hand")
    job, report = analysed(corpus)
    assert report["corpus"] == "hand" and report["basis"] == "embeddings"
    assert (report["n_queries"], report["n_models"], report["n_responses"]) == (2, 2, 8)
    # every model repeats itself exactly on both queries
    for key in ("alpha", "beta", "pooled"):
        assert report["intra_model"][key]["mean"] == pytest.approx(1.0, abs=1e-6)
        assert report["intra_model"][key]["histogram"] == [0.0] * 9 + [1.0]
    assert report["intra_model"]["pooled"]["values"] == 4
    # across models: 1 on "same", 0 on "apart"; the diagonal holds the intra-model means
    inter = report["inter_model"]
    assert sorted(inter["models"]) == ["alpha", "beta"]
    assert inter["diagonal"] == "intra_model_mean"
    assert np.allclose(inter["matrix"], [[1.0, 0.5], [0.5, 1.0]], atol=1e-6)
    # top-N: n = 1..50; on "apart" the nearest neighbour is the model's own other sample
    assert report["top_n"]["n"] == list(range(1, 51))
    by_query = {row["query_id"]: row for row in csv.DictReader(open(job_file(job, "queries")))}
    assert list(by_query["apart"]) == QUERY_COLUMNS
    assert float(by_query["apart"]["unique_models_n1"]) == 1.0
    assert float(by_query["apart"]["inter_model_mean"]) == pytest.approx(0.0, abs=1e-6)
    assert float(by_query["same"]["inter_model_mean"]) == pytest.approx(1.0, abs=1e-6)
    assert by_query["apart"]["category"] == "facts"
    # three of the four responses repeat an earlier one; on "apart" two of four
    assert float(by_query["same"]["duplicate_share"]) == 0.75
    # categories: one query each, so both small
    assert sorted(report["by_category"]) == ["creative", "facts"]
    for group in report["by_category"].values():
        assert group["queries"] == 1 and group["small"] is True
    facts = report["by_category"]["facts"]
    assert np.allclose(facts["inter_model"]["matrix"], [[1.0, 0.0], [0.0, 1.0]], atol=1e-6)
    # typicality by row_index (the file's order): 1 on "same", 0 on "apart"
    typicality = np.asarray(typicality_of(job))
    assert np.allclose(typicality, [1, 1, 1, 1, 0, 0, 0, 0], atol=1e-6)
    assert job.result["files"]["report"] == job.result_path
    assert report["lexical"]["by_query"]["duplicate_share"] == pytest.approx(0.625)


def test_identical_responses_of_one_model_give_one_unique_model():
    rows = [("q", "Say hi.", "", "solo", s, f"r{s}", "Hi there.", [0.6, 0.8]) for s in range(1, 5)]
    corpus = make_corpus("solo", rows)
    _, report = analysed(corpus)
    assert report["intra_model"]["solo"]["mean"] == pytest.approx(1.0, abs=1e-6)
    assert report["top_n"]["mean_unique_models"][:3] == [1.0, 1.0, 1.0]
    assert report["top_n"]["mean_unique_models"][3] is None  # 3 neighbours at most
    assert report["by_category"] == {}
    assert report["inter_model"]["matrix"] == [[pytest.approx(1.0, abs=1e-6)]]


def test_report_equals_the_pure_pipeline_on_the_same_arrays():
    rows = random_rows()
    corpus = make_corpus("random", rows)
    job, report = analysed(corpus, bootstrap=300, seed=11)
    stored = np.asarray(open_embeddings(corpus))  # unit rows, float32, in file order
    names = sorted({row[3] for row in rows})
    expected = analysis_report(
        analyse_corpus(
            pools_from_arrays(
                [row[0] for row in rows],
                stored,
                np.array([names.index(row[3]) for row in rows]),
                sample=np.array([row[4] for row in rows]),
                category=[row[2] for row in rows],
                texts=[row[6] for row in rows],
            ),
            names,
            AnalysisSettings(bootstrap_draws=300, seed=11),
        )
    )
    for key in ("models", "intra_model", "inter_model", "top_n", "lexical", "by_category"):
        assert close(report[key], expected[key]), key
    assert report["settings"]["bootstrap_draws"] == 300 and report["settings"]["seed"] == 11
    # typicality per response equals the pipeline's per query, placed by row
    typicality = np.asarray(typicality_of(job))
    assert np.isfinite(typicality).all() and typicality.shape == (len(rows),)


def test_lexical_basis_without_embeddings_and_on_request():
    corpus = make_corpus("words", embeddings=False)
    _, report = analysed(corpus)
    assert report["basis"] == "tfidf" and report["embeddings"] is None
    assert report["settings"]["lexical"] is True
    # identical texts: TF-IDF cosine 1 within each model on both queries
    assert report["intra_model"]["pooled"]["mean"] == pytest.approx(1.0, abs=1e-6)
    with_vectors = make_corpus("vectors")
    _, report = analysed(with_vectors, lexical=True)
    assert report["basis"] == "tfidf"


def test_analysis_params_are_checked():
    from core.errors import InvalidInput

    with pytest.raises(InvalidInput, match="bootstrap"):
        analysis_params(bootstrap=0)
    with pytest.raises(InvalidInput, match="seed"):
        analysis_params(seed="x")
    with pytest.raises(InvalidInput, match="no batch"):
        analysis_params(human_batch="missing")
    assert analysis_params(lexical="on")["lexical"] is True


def test_progress_counts_the_parts_measured():
    corpus = make_corpus("progress")
    job, _ = analysed(corpus)
    assert (job.progress, job.total) == (1, 1)  # 8 responses: one part
    assert job.result["parts"] == 1


# --------------------------------------------------------------------------- the command


def test_command_writes_the_report_and_the_tables(tmp_path):
    make_corpus("cmd")
    target = tmp_path / "report.json"
    tables = tmp_path / "tables"
    call_command(
        "analyze_corpus",
        "cmd",
        "--json",
        str(target),
        "--bootstrap",
        "50",
        "--seed",
        "4",
        "--csv",
        str(tables),
    )
    report = json.loads(target.read_text())
    assert report["settings"]["bootstrap_draws"] == 50 and report["settings"]["seed"] == 4
    assert report["intra_model"]["pooled"]["mean"] == pytest.approx(1.0, abs=1e-6)
    written = sorted(path.name for path in tables.iterdir())
    assert "cmd-queries.csv" in written and "cmd-inter-model.csv" in written
    assert "cmd-top-n.csv" in written and "cmd-models.csv" in written
    assert "cmd-responses.csv" in written  # each response's typicality, as on the page
    top_n = list(csv.DictReader(open(tables / "cmd-top-n.csv")))
    assert [int(row["n"]) for row in top_n] == list(range(1, 51))


def test_command_lexical_and_unknown_corpus(tmp_path):
    make_corpus("cmd-lex")
    target = tmp_path / "lex.json"
    call_command("analyze_corpus", "cmd-lex", "--json", str(target), "--lexical")
    assert json.loads(target.read_text())["basis"] == "tfidf"
    with pytest.raises(CommandError, match="does not exist"):
        call_command("analyze_corpus", "nope", "--json", str(target))
    with pytest.raises(CommandError, match="bootstrap"):
        call_command("analyze_corpus", "cmd-lex", "--json", str(target), "--bootstrap", "0")
