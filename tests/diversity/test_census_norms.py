"""Human category norms: computed from answers, read from a norms file, compared with a field."""

import io

import pytest

from diversity.census.core.comparison import compare_with_norms
from diversity.census.norms import CategoryNorm, human_norms, read_norms_file
from diversity.census.sources import CensusInputError
from tests.diversity.census_files import TREE_NORM, norms_file


def test_human_norms_from_answers():
    answers = ["oak"] * 12 + ["pine"] * 8 + ["maple"] * 2 + [f"tree-{i}" for i in range(18)]
    norms = human_norms({"tree": answers, "pet": ["dog", "cat", "cat", "dog"], "empty": []})
    assert norms["tree"] == CategoryNorm("tree", "oak", 12 / 40, 3)
    assert norms["pet"] == CategoryNorm("pet", "dog", 2 / 4, 2)  # tie: dog occurs first
    assert "empty" not in norms


def test_comparison_with_norms_by_hand():
    human = {
        "x": CategoryNorm("x", "a", 0.5, 4),
        "y": CategoryNorm("y", "b", 0.3, 6),
        "z": CategoryNorm("z", "c", 0.2, 8),  # no model figure: not shared
        "t": CategoryNorm("t", "d", 0.4, 2),
    }
    model = {
        "t": CategoryNorm("t", "d", 0.4, 3),  # equal share: not more concentrated
        "w": CategoryNorm("w", "e", 0.9, 1),  # no human norm: not shared
        "y": CategoryNorm("y", "f", 0.6, 2),
        "x": CategoryNorm("x", "a", 0.4, 3),
    }
    comparison = compare_with_norms(human, model, model_source="computed")
    assert [row.category for row in comparison.categories] == ["x", "y", "t"]
    assert [row.model_more_concentrated for row in comparison.categories] == [False, True, False]
    assert comparison.n_model_more_concentrated == 1
    assert comparison.mean_model_share == pytest.approx((0.4 + 0.6 + 0.4) / 3)
    assert comparison.mean_human_share == pytest.approx((0.5 + 0.3 + 0.4) / 3)
    assert comparison.mean_model_n_ge5 == pytest.approx((3 + 2 + 3) / 3)
    assert comparison.mean_human_n_ge5 == pytest.approx((4 + 6 + 2) / 3)
    assert comparison.model_source == "computed"


def test_comparison_without_shared_category_has_no_means():
    comparison = compare_with_norms({"x": CategoryNorm("x", "a", 0.5, 4)}, {}, "computed")
    assert comparison.categories == ()
    assert comparison.n_model_more_concentrated == 0
    assert comparison.mean_model_share is None


# --------------------------------------------------------------------------- norms file


def test_norms_file_keeps_human_and_published_model_apart():
    mismatched = {**TREE_NORM, "category": "tool", "wording_mismatch": True}
    norms = read_norms_file(norms_file(TREE_NORM, mismatched), name="norms.json")
    assert norms.source == "a study"
    assert norms.human["tree"] == CategoryNorm("tree", "oak", 0.31, 5)
    assert norms.published_model["tree"] == CategoryNorm("tree", "oak", 0.937, 1)
    assert norms.wording_mismatch == {"tool"}


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        ({"category": ""}, "norms.json: per_category[1].category: must be a non-empty string"),
        ({"human_modal": None}, "norms.json: per_category[1].human_modal: must be a non-empty"),
        ({"human_modal_first": 1.2}, "norms.json: per_category[1].human_modal_first: must be a"),
        ({"model_modal_share": "0.5"}, "norms.json: per_category[1].model_modal_share: must be"),
        ({"model_n_ge5": -1}, "norms.json: per_category[1].model_n_ge5: must be an integer"),
        ({"category": "tree"}, "norms.json: per_category[1].category: 'tree' appears twice"),
    ],
)
def test_bad_norms_row_names_its_place(change, expected):
    other = {**TREE_NORM, "category": "flower"}
    with pytest.raises(CensusInputError) as caught:
        read_norms_file(norms_file(TREE_NORM, {**other, **change}), name="norms.json")
    [problem] = caught.value.problems
    assert problem.startswith(expected)


def test_norms_file_without_rows_or_not_json_is_rejected():
    with pytest.raises(CensusInputError, match=r"^norms.json: per_category: missing"):
        read_norms_file(io.BytesIO(b"{}"), name="norms.json")
    with pytest.raises(CensusInputError, match=r"^norms.json:1: file: not valid JSON"):
        read_norms_file(io.BytesIO(b"{"), name="norms.json")
