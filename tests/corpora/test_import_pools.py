"""Importing response pools (FORMATS.md, "Response pools"): good JSONL and CSV files, and
bad files refused whole with every ``FILE:LINE: field: message``."""

import io
import json
import threading

import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from core.errors import Conflict, InvalidInput
from core.jobs import execution
from core.models import AuditEvent, Job
from core.tabular import MAX_LISTED_PROBLEMS, ImportRejected
from diversity.corpora.models import Corpus, CorpusModel, CorpusQuery, CorpusResponse
from diversity.corpora.services import imports
from diversity.corpora.services.imports import import_corpus
from tests.corpora.pools import HEADER, csv_pool, jsonl_pool, pool_rows

pytestmark = pytest.mark.django_db


def nothing_stored() -> bool:
    return not (
        Corpus.objects.exists()
        or CorpusQuery.objects.exists()
        or CorpusModel.objects.exists()
        or CorpusResponse.objects.exists()
    )


def refused(path, **kwargs) -> list[str]:
    """The problems of a refused file, named by its base name (as in an upload)."""
    with pytest.raises(ImportRejected) as caught:
        import_corpus("pool", path, **kwargs)
    assert nothing_stored()
    return [problem.replace(f"{path.parent}/", "") for problem in caught.value.problems]


# --------------------------------------------------------------------------- good files


@pytest.mark.parametrize("write", [jsonl_pool, csv_pool], ids=["jsonl", "csv"])
def test_a_good_pool_is_imported_with_its_queries_models_and_rows(tmp_path, write):
    rows = pool_rows(n_queries=3, models=("alpha", "beta", "gamma"), samples=2)
    path = write(tmp_path / f"pool.{write.__name__[:-5]}", rows)
    corpus = import_corpus("pool", path, title="Three models")

    assert (corpus.n_queries, corpus.n_models, corpus.n_responses) == (3, 3, 18)
    assert corpus.title == "Three models" and corpus.file_name == path.name
    assert corpus.file_bytes == path.stat().st_size and len(corpus.file_sha256) == 64
    queries = list(corpus.queries.order_by("position"))
    assert [q.query_id for q in queries] == ["q0", "q1", "q2"]
    assert [(q.category, q.subcategory) for q in queries] == [
        ("creative", "poems"),
        ("facts", ""),
        ("creative", ""),
    ]
    assert [q.n_responses for q in queries] == [6, 6, 6]
    assert sorted(corpus.corpus_models.values_list("name", flat=True)) == [
        "alpha",
        "beta",
        "gamma",
    ]
    # row_index follows the file's order: the embedding row of each response
    stored = list(
        corpus.responses.order_by("row_index").values_list(
            "row_index", "response_id", "sample", "model__name", "query__query_id", "text"
        )
    )
    assert [r[0] for r in stored] == list(range(18))
    assert [r[1] for r in stored] == [row["response_id"] for row in rows]
    assert stored[3] == (3, "q0-beta-2", 2, "beta", "q0", rows[3]["response"])
    event = AuditEvent.objects.get(action="corpus.import")
    assert event.changes["n_responses"] == 18 and event.changes["sha256"] == corpus.file_sha256


def test_categories_are_optional_and_ids_may_be_numbers(tmp_path):
    rows = [
        {
            "query_id": 7,
            "query": "Q?",
            "model": "m",
            "sample": "0",
            "response_id": 1,
            "response": "a",
        },
        {
            "query_id": 7,
            "query": "Q?",
            "model": "m",
            "sample": 1,
            "response_id": 2,
            "response": "b",
        },
    ]
    corpus = import_corpus("pool", jsonl_pool(tmp_path / "p.jsonl", rows))
    query = corpus.queries.get()
    assert (query.query_id, query.category, query.subcategory) == ("7", "", "")
    assert list(corpus.responses.values_list("response_id", flat=True).order_by("row_index")) == [
        "1",
        "2",
    ]


def test_a_csv_without_the_optional_columns_is_accepted(tmp_path):
    header = ["query_id", "query", "model", "sample", "response_id", "response"]
    rows = [["q", "Why?", "m", 1, "r1", "Because."], ["q", "Why?", "m", 2, "r2", 'Hm, "yes"\nno.']]
    corpus = import_corpus("pool", csv_pool(tmp_path / "p.csv", rows, header))
    assert corpus.n_responses == 2
    assert corpus.responses.get(response_id="r2").text == 'Hm, "yes"\nno.'


def test_the_command_imports_and_prints_a_summary(tmp_path, capsys):
    path = jsonl_pool(tmp_path / "pool.jsonl", pool_rows(n_queries=2, samples=3))
    call_command("import_corpus", "pool", str(path), "--title", "T", "--quiet")
    out = capsys.readouterr().out
    assert "Imported corpus pool: 12 responses of 2 models to 2 queries" in out
    assert Corpus.objects.get().title == "T"


def test_the_command_draws_its_progress_on_stderr(tmp_path, monkeypatch):
    monkeypatch.setattr(imports, "WRITE_CHUNK_ROWS", 4)
    path = jsonl_pool(tmp_path / "pool.jsonl", pool_rows(n_queries=2, samples=3))
    err = io.StringIO()
    call_command("import_corpus", "pool", str(path), stderr=err, stdout=io.StringIO())
    assert "checking the file" in err.getvalue() and "bytes" in err.getvalue()


def test_a_name_that_is_taken_or_malformed_is_refused(tmp_path):
    path = jsonl_pool(tmp_path / "pool.jsonl", pool_rows())
    import_corpus("pool", path)
    with pytest.raises(Conflict):
        import_corpus("pool", path)
    with pytest.raises(InvalidInput, match="name"):
        import_corpus("Bad Name", path)
    with pytest.raises(InvalidInput, match="a word of the API's paths"):
        import_corpus("import-jobs", path)
    assert Corpus.objects.count() == 1


def test_chunked_writes_give_the_same_rows(tmp_path, monkeypatch):
    monkeypatch.setattr(imports, "WRITE_CHUNK_ROWS", 5)
    rows = pool_rows(n_queries=4, models=("a", "b", "c"), samples=2)
    corpus = import_corpus("pool", jsonl_pool(tmp_path / "p.jsonl", rows))
    assert corpus.n_responses == 24
    assert list(corpus.responses.order_by("row_index").values_list("response_id", flat=True)) == [
        row["response_id"] for row in rows
    ]
    assert sum(corpus.queries.values_list("n_responses", flat=True)) == 24


# --------------------------------------------------------------------------- bad files


def test_a_bad_sample_is_refused_with_its_line(tmp_path):
    rows = pool_rows()
    rows[2]["sample"] = "two"
    rows[4]["sample"] = -1
    rows[5]["sample"] = 1.5
    problems = refused(jsonl_pool(tmp_path / "p.jsonl", rows))
    assert problems[0].startswith("p.jsonl:3: sample: must be a whole number")
    assert problems[1].startswith("p.jsonl:5: sample: must be a whole number")
    assert problems[2].startswith("p.jsonl:6: sample: must be a whole number")


def test_a_missing_field_is_refused_in_jsonl_and_csv(tmp_path):
    rows = pool_rows()
    del rows[1]["model"]
    rows[3]["response"] = "  "
    problems = refused(jsonl_pool(tmp_path / "p.jsonl", rows))
    assert "p.jsonl:2: model: required key is missing" in problems
    assert "p.jsonl:4: response: must not be empty" in problems

    header = [column for column in HEADER if column != "response_id"]
    problems = refused(csv_pool(tmp_path / "p.csv", pool_rows(), header))
    assert "p.csv:1: response_id: required column is missing from the header" in problems


def test_a_repeated_response_id_is_refused_at_its_second_line(tmp_path):
    rows = pool_rows()
    rows[6]["response_id"] = rows[1]["response_id"]
    problems = refused(jsonl_pool(tmp_path / "p.jsonl", rows))
    assert problems == ["p.jsonl:7: response_id: 'q0-alpha-2' already appears on line 2"]


def test_a_repeated_query_model_sample_is_refused(tmp_path):
    rows = pool_rows()
    rows[1]["sample"] = 1  # q0, alpha: sample 1 twice
    problems = refused(csv_pool(tmp_path / "p.csv", rows))
    assert problems == [
        "p.csv:3: sample: model 'alpha' already has sample 1 of query 'q0' on line 2"
    ]


def test_a_query_whose_text_or_category_changes_between_rows_is_refused(tmp_path):
    rows = pool_rows()
    rows[3]["query"] = "Something else?"
    rows[5]["category"] = "creative"
    problems = refused(jsonl_pool(tmp_path / "p.jsonl", rows))
    assert problems == [
        "p.jsonl:4: query: query 'q0' has a different text on line 1",
        "p.jsonl:6: category: query 'q1' has category 'facts' on line 5, not 'creative'",
    ]


def test_a_subcategory_without_category_is_refused(tmp_path):
    rows = pool_rows()
    rows[4]["category"] = ""
    rows[4]["subcategory"] = "rivers"
    problems = refused(jsonl_pool(tmp_path / "p.jsonl", rows))
    assert (
        "p.jsonl:5: subcategory: a sub-category needs its category: give category too" in problems
    )


def test_broken_lines_and_wrong_types_are_each_reported(tmp_path):
    rows = pool_rows()
    rows[0]["response"] = ["not", "text"]
    rows = [*rows[:2], "{not json", *rows[2:]]
    problems = refused(jsonl_pool(tmp_path / "p.jsonl", rows))
    assert problems[0] == "p.jsonl:1: response: must be a string, not a list"
    assert problems[1].startswith("p.jsonl:3: row: not valid JSON")


def test_problems_are_capped_with_a_count_of_the_rest(tmp_path):
    rows = pool_rows(n_queries=30, models=("a", "b"), samples=1)
    for row in rows:
        row["sample"] = "x"
    problems = refused(jsonl_pool(tmp_path / "p.jsonl", rows))
    assert len(problems) == MAX_LISTED_PROBLEMS + 1
    assert problems[-1] == f"... and {60 - MAX_LISTED_PROBLEMS} more problems"


def test_a_problem_after_several_chunks_of_rows_leaves_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(imports, "WRITE_CHUNK_ROWS", 3)
    rows = pool_rows(n_queries=5)
    rows[-1]["sample"] = "last"
    problems = refused(jsonl_pool(tmp_path / "p.jsonl", rows))
    assert problems == [
        f"p.jsonl:{len(rows)}: sample: must be a whole number from 0 to 2,147,483,647, not 'last'"
    ]


def test_a_problem_found_while_writing_rolls_the_rows_written_back(tmp_path, monkeypatch):
    """The file is checked again as it is written (it may have changed since the check):
    a problem then undoes the chunks already written."""
    monkeypatch.setattr(imports, "WRITE_CHUNK_ROWS", 3)
    check_repeats = imports._Loader.check_repeats

    def changed_meanwhile(loader, reread):
        check_repeats(loader, reread)
        if loader.corpus is not None:
            assert CorpusResponse.objects.exists()  # chunks were written
            loader.problems.add(7, "response", "changed since it was checked")

    monkeypatch.setattr(imports._Loader, "check_repeats", changed_meanwhile)
    problems = refused(jsonl_pool(tmp_path / "p.jsonl", pool_rows(n_queries=5)))
    assert problems == ["p.jsonl:7: response: changed since it was checked"]


def test_an_empty_file_or_an_unknown_type_is_refused(tmp_path):
    empty = tmp_path / "p.jsonl"
    empty.write_text("\n")
    assert refused(empty) == ["p.jsonl:1: file: holds no response at all"]
    other = tmp_path / "p.txt"
    other.write_text("x")
    assert "unsupported file type" in refused(other)[0]


def test_the_command_lists_every_problem_and_exits_non_zero(tmp_path):
    rows = pool_rows()
    rows[1]["sample"] = "?"
    rows[2]["response_id"] = rows[0]["response_id"]
    path = jsonl_pool(tmp_path / "pool.jsonl", rows)
    with pytest.raises(CommandError) as caught:
        call_command("import_corpus", "pool", str(path), "--quiet")
    message = str(caught.value)
    assert "was rejected, nothing was imported" in message
    assert "pool.jsonl:2: sample:" in message and "pool.jsonl:3: response_id:" in message
    assert nothing_stored()


@pytest.mark.slow
def test_a_large_file_is_streamed_not_held_in_memory(tmp_path):
    """A 40 MB pool of long responses: the import's memory peak stays well under its size."""
    import tracemalloc

    path = tmp_path / "big.jsonl"
    filler = "word " * 400  # 2,000 characters a response
    with open(path, "w", encoding="utf-8") as stream:
        for q in range(500):
            for m in range(10):
                for s in range(4):
                    row = {"query_id": f"q{q}", "query": f"Query {q}?", "model": f"m{m}",
                           "sample": s, "response_id": f"{q}-{m}-{s}",
                           "response": f"{filler}{q} {m} {s}"}  # fmt: skip
                    stream.write(json.dumps(row) + "\n")
    size = path.stat().st_size
    assert size > 40_000_000
    tracemalloc.start()
    try:
        corpus = import_corpus("big", path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert corpus.n_responses == 20_000
    assert peak < size / 2, f"peak {peak / 1e6:.1f} MB for a {size / 1e6:.0f} MB file"


@pytest.mark.django_db(transaction=True)
def test_an_import_jobs_progress_is_seen_by_others_before_it_commits(tmp_path, monkeypatch):
    """The job's progress is written outside the import's transaction: a page polling the
    job from another connection sees it move while the corpus is not there yet."""
    monkeypatch.setattr(imports, "WRITE_CHUNK_ROWS", 4)
    monkeypatch.setattr(execution, "PROGRESS_WRITE_INTERVAL_S", 0)
    path = jsonl_pool(tmp_path / "p.jsonl", pool_rows(n_queries=6, samples=2))
    with open(path, "rb") as upload:
        stored = imports.save_upload(upload, "p.jsonl")
    job = Job.objects.create(
        kind=imports.JOB_KIND,
        params={"stored_file": stored, "filename": "p.jsonl", "name": "seen", "title": ""},
    )
    seen = []  # (progress, corpus visible) as another connection reads them
    write_progress = execution.JobProgress.__call__

    def write_and_look(progress, done, total=None, message=""):
        write_progress(progress, done, total, message)

        def look():
            try:
                row = Job.objects.get(pk=job.pk)
                seen.append((row.progress, Corpus.objects.filter(name="seen").exists()))
            finally:
                connection.close()

        other = threading.Thread(target=look)
        other.start()
        other.join()

    monkeypatch.setattr(execution.JobProgress, "__call__", write_and_look)
    finished = execution.run_job(str(job.pk))

    assert finished.state == Job.State.SUCCEEDED, finished.message
    assert any(progress > 0 and not corpus_visible for progress, corpus_visible in seen), seen
    progress = [value for value, _ in seen]
    assert progress == sorted(progress) and finished.progress == finished.total
