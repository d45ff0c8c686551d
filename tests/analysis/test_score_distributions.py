"""Importing ``score_distribution``: a source's probabilities over the kind's labels, beside
or instead of ``score``; every rejection names FILE:LINE: field and writes nothing."""

import pytest

from analysis.models import Score
from analysis.services.scores import import_scores
from tests.analysis.test_scores import DROP, rejected, rid, row
from tests.files import write_csv, write_jsonl

pytestmark = pytest.mark.django_db


def test_distribution_instead_of_a_score_stores_its_expected_label(tmp_path, absolute):
    path = write_jsonl(
        tmp_path / "judge.jsonl",
        [
            row("judge", "judge", DROP, response_id=rid(absolute, 0),
                score_distribution=[0.1, 0.2, 0.3, 0.2, 0.2]),
            row("judge", "judge", 4.5, response_id=rid(absolute, 1),
                score_distribution=[0, 0, 0, 0.5, 0.5]),
        ],
    )  # fmt: skip
    summary = import_scores(path)
    assert summary.scores_created == 2
    first = Score.objects.get(response__response_id=rid(absolute, 0))
    assert first.distribution == [0.1, 0.2, 0.3, 0.2, 0.2]
    assert first.value == pytest.approx(0.1 + 0.4 + 0.9 + 0.8 + 1.0)  # sum p * label
    second = Score.objects.get(response__response_id=rid(absolute, 1))
    assert second.value == 4.5 and second.distribution == [0, 0, 0, 0.5, 0.5]
    assert import_scores(path).scores_unchanged == 2  # the same file again changes nothing


def test_pairwise_distributions_are_per_item_and_csv_cells_are_json(tmp_path, pairwise):
    path = write_csv(
        tmp_path / "pairs.csv",
        ["source", "kind", "item_id", "score_distribution"],
        [["judge", "judge", "item-0", "[0.5, 0.25, 0.25, 0, 0]"]],
    )
    import_scores(path, batch=pairwise)
    stored = Score.objects.get(item__item_id="item-0")
    assert stored.distribution == [0.5, 0.25, 0.25, 0, 0]
    assert stored.value == pytest.approx(0.5 * -2 + 0.25 * -1)


def test_bad_distributions_are_rejected_with_file_and_line(tmp_path, absolute):
    r = [rid(absolute, i) for i in range(4)]
    path = write_jsonl(
        tmp_path / "bad.jsonl",
        [
            row("judge", "judge", DROP, response_id=r[0], score_distribution=[0.5, 0.5]),
            row("judge", "judge", DROP, response_id=r[1],
                score_distribution=[0.6, -0.1, 0.2, 0.2, 0.1]),
            row("judge", "judge", DROP, response_id=r[2],
                score_distribution=[0.2, 0.2, 0.2, 0.2, 0.1]),
            row("judge", "judge", DROP, response_id=r[3], score_distribution="0.2 0.8"),
            row("judge", "judge", DROP, response_id=r[3], score_distribution=[0.2, "x", 0, 0, 0.8]),
            row("judge", "judge", DROP, response_id=r[3], score_distribution=DROP),
        ],
    )  # fmt: skip
    assert rejected(path, filename="bad.jsonl") == [
        "bad.jsonl:1: score_distribution: has 2 probabilities; it needs 5, one per label "
        "(1, 2, 3, 4, 5)",
        "bad.jsonl:2: score_distribution: entry 2 is negative (-0.1)",
        "bad.jsonl:3: score_distribution: sums to 0.9, not 1 (within 1e-06)",
        "bad.jsonl:4: score_distribution: must be a JSON list of probabilities",
        "bad.jsonl:5: score_distribution: entry 2 is a string, not a number",
        "bad.jsonl:6: score: required key is missing",
    ]


def test_one_bad_row_rejects_the_whole_file(tmp_path, absolute):
    path = write_jsonl(
        tmp_path / "mixed.jsonl",
        [
            row("judge", "judge", 3.0, response_id=rid(absolute, 0)),
            row("judge", "judge", DROP, response_id=rid(absolute, 1),
                score_distribution=[1.0, 0.0, 0.0, 0.0, 1e-5]),
        ],
    )  # fmt: skip
    assert rejected(path, filename="mixed.jsonl") == [
        "mixed.jsonl:2: score_distribution: sums to 1.00001, not 1 (within 1e-06)"
    ]


def test_a_distribution_within_the_tolerance_is_accepted(tmp_path, absolute):
    path = write_jsonl(
        tmp_path / "close.jsonl",
        [row("judge", "judge", DROP, response_id=rid(absolute, 0),
             score_distribution=[0.2, 0.2, 0.2, 0.2, 0.2000005])],
    )  # fmt: skip
    assert import_scores(path).scores_created == 1


def test_a_pairwise_batch_takes_no_distribution_per_response(tmp_path, pairwise):
    path = write_jsonl(
        tmp_path / "per-response.jsonl",
        [row("judge", "judge", DROP, response_id=rid(pairwise, 0, "a"),
             score_distribution=[0.2] * 5)],
    )  # fmt: skip
    assert rejected(path, batch=pairwise, filename="per-response.jsonl") == [
        "per-response.jsonl:1: score_distribution: a pairwise distribution is over a pair's "
        "five choices: give it with the pair's item_id, not a response_id"
    ]


def test_a_changed_distribution_is_a_conflict_with_the_stored_one(tmp_path, absolute):
    first = write_jsonl(
        tmp_path / "a.jsonl",
        [row("judge", "judge", 3.0, response_id=rid(absolute, 0), score_distribution=[0.2] * 5)],
    )
    import_scores(first)
    second = write_jsonl(
        tmp_path / "b.jsonl",
        [row("judge", "judge", 3.0, response_id=rid(absolute, 0),
             score_distribution=[0, 0, 1, 0, 0])],
    )  # fmt: skip
    problems = rejected(second, filename="b.jsonl")
    assert problems == [
        f"b.jsonl:1: score_distribution: differs from the distribution already stored for "
        f"source 'judge' and response_id {rid(absolute, 0)!r}"
    ]
