"""GENIE's own files as they are: the similarity file (JSON lines, column-oriented JSON,
CSV), the answers and questions files, against GENIE's published ``compute_genie``."""

import csv
import io
import json

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from diversity.genie import native
from diversity.genie.core.scoring import document_scores, question_scores
from diversity.genie.records import JudgmentFileError, read_judgment_file
from tests.diversity import genie_native_set as genie


def compute_genie_reference(path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """GENIE's ``compute_genie`` (src/novelty_calculation/novelty.py) from its definition:
    read the JSON lines with pandas, keep ``Similarity`` in {1, 2, 3, 4}, normalise
    (sim - 1) / 3, Q_GENIE = 1 - mean per (Prompt, DocID_1, Model_1, Question, Answer_1,
    Feature), GENIE = mean of Q_GENIE per (Prompt, DocID_1, Model_1, Feature)."""
    frame = pd.read_json(path, orient="records", lines=True)
    kept = frame.loc[frame["Similarity"].isin([1, 2, 3, 4])].copy()
    kept["Normalized"] = (kept["Similarity"].astype(float) - 1) / 3
    q_keys = ["Prompt", "DocID_1", "Model_1", "Question", "Answer_1", "Feature"]
    q_genie = (1 - kept.groupby(q_keys)["Normalized"].mean()).reset_index()
    genie_scores = (
        q_genie.groupby(["Prompt", "DocID_1", "Model_1", "Feature"])["Normalized"]
        .mean()
        .reset_index()
    )
    return (
        genie_scores.rename(columns={"Normalized": "GENIE"}),
        q_genie.rename(columns={"Normalized": "Q_GENIE"}),
    )


@pytest.fixture
def similarity_file(tmp_path):
    path = tmp_path / "similarity.jsonl"
    path.write_text(genie.jsonl(genie.rows()), "utf-8")
    return path


def assert_scores_equal_compute_genie(judgments, path) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Every Genie(doc, feature) and every Q(doc, q) of the LLM judgments equals what
    ``compute_genie`` gives from the file at ``path``, to 1e-12, with the same answers;
    returns GENIE's two tables."""
    expected, expected_q = compute_genie_reference(path)
    scores = {(s.prompt_id, s.document_id, s.feature): s for s in document_scores(judgments, "llm")}
    assert len(expected) == len(scores)
    for row in expected.itertuples():
        document = native.document_key(row.Model_1, str(row.DocID_1))
        key = (native.prompt_id_of(row.Prompt), document, row.Feature)
        assert abs(scores[key].novelty - row.GENIE) <= 1e-12
    q_scores = {
        (q.prompt_id, q.document_id, q.question_id): q for q in question_scores(judgments, "llm")
    }
    assert len(expected_q) == len(q_scores)
    for row in expected_q.itertuples():
        document = native.document_key(row.Model_1, str(row.DocID_1))
        key = (native.prompt_id_of(row.Prompt), document, native.question_id_of(row.Question))
        assert abs(q_scores[key].novelty - row.Q_GENIE) <= 1e-12
        assert q_scores[key].target_answer == row.Answer_1
    return expected, expected_q


def test_every_genie_score_equals_compute_genie(similarity_file):
    found = read_judgment_file(similarity_file)
    assert found.layout == "genie-similarity"
    expected, _ = assert_scores_equal_compute_genie(found.judgments, similarity_file)
    assert len(expected) > 40


def test_left_out_pairs_are_counted_by_reason(similarity_file):
    records = genie.rows()
    found = read_judgment_file(similarity_file)
    excluded = sum(
        r["Answer_1"] in genie.EXCLUDED or r["Answer_2"] in genie.EXCLUDED for r in records
    )
    kept = [
        r
        for r in records
        if r["Answer_1"] not in genie.EXCLUDED and r["Answer_2"] not in genie.EXCLUDED
    ]
    assert found.left_out == {
        "no_answer": excluded,
        "zero": sum(r["Similarity"] == 0 for r in kept),
        "empty": sum(r["Similarity"] in (None, "") for r in kept),
        "other_number": sum(r["Similarity"] == 5 for r in kept),
    }
    assert excluded and all(found.left_out.values())
    usable = [j for j in found.judgments if j.usable]
    assert len(usable) == sum(r["Similarity"] in (1, 2, 3, 4) for r in kept)
    judgment = found.judgments[0]
    assert judgment.prompt == genie.PROMPTS[0] and judgment.question == genie.QUESTIONS[0][0]
    assert (judgment.model, judgment.method, judgment.source_document_id) == ("gpt-4o", None, "0")
    persona = next(j for j in found.judgments if j.source_model == "gpt-4o+persona")
    assert (persona.model, persona.method) == ("gpt-4o", "persona")


def test_column_oriented_json_and_csv_read_the_same_judgments(tmp_path, similarity_file):
    records = genie.rows()
    columns = tmp_path / "similarity.json"
    columns.write_text(genie.column_json(records), "utf-8")
    as_records = tmp_path / "records.json"
    as_records.write_text(json.dumps(records, indent=1), "utf-8")
    as_csv = tmp_path / "similarity.csv"
    with open(as_csv, "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(
            handle, fieldnames=[*native.SIMILARITY_COLUMNS, "SimilarityJudgment"]
        )
        writer.writeheader()
        for row in records:
            writer.writerow({k: "" if v is None else v for k, v in row.items()})
    reference = read_judgment_file(similarity_file)
    for path in (columns, as_records, as_csv):
        found = read_judgment_file(path)
        assert found.judgments == reference.judgments, path.name
        assert found.left_out == reference.left_out


def test_model_table_overrides_the_plus_rule(similarity_file):
    table = {"llama-3+persona": ("llama-3", "persona-v2"), "gpt-4o": ("gpt-4o", "baseline")}
    found = read_judgment_file(similarity_file, models=table)
    methods = {(j.source_model, j.model, j.method) for j in found.judgments}
    assert methods == {
        ("gpt-4o", "gpt-4o", "baseline"),
        ("gpt-4o+persona", "gpt-4o", "persona"),
        ("llama-3", "llama-3", None),
        ("llama-3+persona", "llama-3", "persona-v2"),
    }


def test_a_refused_genie_file_names_file_line_and_field(tmp_path):
    records = genie.rows()[:4]
    records[1] = {**records[1], "DocID_1": None}
    records[2] = {**records[2], "Answer_2": 7}
    del records[3]["Feature"]
    path = tmp_path / "bad.jsonl"
    path.write_text(genie.jsonl(records) + "[1]\n", "utf-8")
    with pytest.raises(JudgmentFileError) as caught:
        read_judgment_file(path)
    assert caught.value.problems == [
        "bad.jsonl:2: DocID_1: required, must be a non-empty string or a whole number",
        "bad.jsonl:3: Answer_2: must be a string or null",
        "bad.jsonl:4: Feature: missing",
        "bad.jsonl:5: row: not a JSON object (found a list)",
    ]
    as_records = tmp_path / "bad.json"
    as_records.write_text(json.dumps(records, indent=2), "utf-8")
    with pytest.raises(JudgmentFileError) as caught:
        read_judgment_file(as_records)
    lines = [problem.split(":")[1] for problem in caught.value.problems]
    starts = [
        number for number, text in enumerate(as_records.read_text().split("\n"), 1) if text == "  {"
    ]
    assert lines == [str(starts[1]), str(starts[2]), str(starts[3])]


def test_texts_are_capped_and_json_depth_is_guarded(tmp_path):
    records = genie.rows()[:2]
    records[1] = {**records[1], "Answer_1": "x" * 50}
    path = tmp_path / "long.jsonl"
    path.write_text(genie.jsonl(records), "utf-8")
    with pytest.raises(JudgmentFileError) as caught:
        read_judgment_file(path, text_max=40)
    assert caught.value.problems[0].startswith("long.jsonl:1: prompt: the text is")
    assert any(
        p.startswith("long.jsonl:2: target_answer: the text is 50") for p in caught.value.problems
    )
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100 + "]" * 100, "utf-8")
    with pytest.raises(JudgmentFileError) as caught:
        read_judgment_file(deep)
    assert caught.value.problems[0].startswith("deep.json:1: file: not valid JSON")


def test_answers_files_make_the_pairs_to_judge(tmp_path):
    def answers(model, docs, prompt_answers):
        return [
            {"Prompt": "P", "DocID": doc, "Model": model, "Question": q, "Answer": a}
            for doc in docs
            for q, a in prompt_answers
        ]

    targets = answers("gpt-4o+persona", [0, 1], [("Who?", "a whale"), ("Where?", "N/A")])
    population = answers("pop", [0, 1, 2], [("Who?", "a bird"), ("Where?", "the sea")])
    questions = {"Prompt": {"0": "P", "1": "P"}, "Question": {"0": "Who?", "1": "Where?"}}
    questions["Feature"] = {"0": "Agent", "1": "Setting"}
    for name, content in (("t.jsonl", targets), ("p.jsonl", population)):
        (tmp_path / name).write_text(genie.jsonl(content), "utf-8")
    (tmp_path / "questions.json").write_text(json.dumps(questions), "utf-8")
    found = read_judgment_file(
        tmp_path / "t.jsonl",
        population=(tmp_path / "p.jsonl", None),
        questions=(tmp_path / "questions.json", None),
    )
    assert found.layout == "genie-answers"
    assert len(found.judgments) == 2 * 2 * 3
    assert found.left_out == {"no_answer": 6}
    assert {(j.feature, j.target_answer) for j in found.judgments} == {
        ("Agent", "a whale"),
        ("Setting", None),
    }
    assert {j.similarity for j in found.judgments} == {None}
    assert {(j.model, j.method) for j in found.judgments} == {("gpt-4o", "persona")}
    # without the questions file the answers name no feature
    with pytest.raises(JudgmentFileError) as caught:
        read_judgment_file(tmp_path / "t.jsonl", population=(tmp_path / "p.jsonl", None))
    assert caught.value.problems[0].startswith("t.jsonl:1: Feature: none given")
    with pytest.raises(JudgmentFileError) as caught:
        read_judgment_file(tmp_path / "t.jsonl")
    assert "give the population's answers file too" in caught.value.problems[0]


def test_a_questions_file_must_agree_with_the_features(tmp_path, similarity_file):
    question, _ = genie.QUESTIONS[0]
    table = io.StringIO(f'Prompt,Question,Feature\n"{genie.PROMPTS[0]}","{question}",Agent\n')
    table.name = "questions.csv"
    with pytest.raises(JudgmentFileError) as caught:
        read_judgment_file(similarity_file, questions=(table, None))
    assert caught.value.problems[0] == (
        "similarity.jsonl:1: Feature: 'Plot', but the questions file says 'Agent'"
    )


def test_a_pair_judged_again_counts_each_judgment_as_compute_genie_does(tmp_path):
    records, repeated = genie.with_repeats(genie.rows())
    path = tmp_path / "similarity.jsonl"
    path.write_text(genie.jsonl(records), "utf-8")
    found = read_judgment_file(path)
    assert found.repeated_pairs == repeated > 20
    assert len(found.judgments) == len(records)
    assert found.left_out["zero"] == sum(
        r["Similarity"] == 0
        for r in records
        if r["Answer_1"] not in genie.EXCLUDED and r["Answer_2"] not in genie.EXCLUDED
    )

    _, expected_q = assert_scores_equal_compute_genie(found.judgments, path)
    # GENIE's mean is over rows: averaging each pair's repeats first would differ
    pair_first = 0
    frame = pd.read_json(path, orient="records", lines=True)
    kept = frame.loc[frame["Similarity"].isin([1, 2, 3, 4])].copy()
    kept["Normalized"] = (kept["Similarity"].astype(float) - 1) / 3
    pairs = kept.groupby(["Prompt", "DocID_1", "Model_1", "Question", "DocID_2", "Model_2"])
    by_pair = pairs["Normalized"].mean().reset_index()
    averaged = (
        1 - by_pair.groupby(["Prompt", "DocID_1", "Model_1", "Question"])["Normalized"].mean()
    )
    for row in expected_q.itertuples():
        pair_first += (
            abs(averaged[(row.Prompt, row.DocID_1, row.Model_1, row.Question)] - row.Q_GENIE) > 1e-6
        )
    assert pair_first > 5  # the file's repeats change the scores: the test can tell


def test_the_platform_layout_still_refuses_a_second_llm_judgment_of_a_pair(tmp_path):
    row = {
        "prompt_id": "p", "question_id": "q", "feature": "Plot", "document_id": "d",
        "population_id": "e", "target_answer": "a", "population_answer": "b",
        "similarity": 2, "source": "llm",
    }  # fmt: skip
    path = tmp_path / "platform.jsonl"
    path.write_text(genie.jsonl([row, {**row, "similarity": 3}]), "utf-8")
    with pytest.raises(JudgmentFileError) as caught:
        read_judgment_file(path)
    assert caught.value.problems == [
        "platform.jsonl:2: source: a second llm judgment of this pair (first at platform.jsonl:1)"
    ]


def test_an_answer_genies_judge_scored_counts_as_compute_genie_counts_it(tmp_path):
    """GENIE's pipeline excludes exactly 'None', 'N/A', … (not 'N/A.' nor ' None'): a pair its
    judge scored 1-4 counts, whatever its answer reads like; one it never scored is no
    answer."""
    records = genie.rows()
    target = next(r for r in records if r["Similarity"] in (1, 2, 3, 4))
    same_document = [
        r
        for r in records
        if (r["Prompt"], r["Question"], r["Model_1"], r["DocID_1"])
        == (target["Prompt"], target["Question"], target["Model_1"], target["DocID_1"])
    ]
    for row in same_document:
        row["Answer_1"] = "N/A."  # written by the answer step, judged by GENIE's judge
    path = tmp_path / "similarity.jsonl"
    path.write_text(genie.jsonl(records), "utf-8")
    found = read_judgment_file(path)
    judged = [r for r in same_document if r["Similarity"] in (1, 2, 3, 4)]
    kept = [
        j
        for j in found.judgments
        if j.usable and j.target_answer == "N/A." and j.source_model == target["Model_1"]
    ]
    assert len(kept) == len(judged) > 0
    _, expected_q = assert_scores_equal_compute_genie(found.judgments, path)
    assert "N/A." in set(expected_q["Answer_1"])


@given(
    st.tuples(st.text(max_size=8), st.text(max_size=8)),
    st.tuples(st.text(max_size=8), st.text(max_size=8)),
)
def test_two_documents_never_share_an_id(first, second):
    # ("a|b", "c") and ("a", "b|c") were one document, their judgments pooled
    if first != second:
        assert native.document_key(*first) != native.document_key(*second)
    assert native.document_key("a|b", "c") != native.document_key("a", "b|c")
