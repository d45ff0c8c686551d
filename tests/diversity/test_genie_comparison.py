"""Models and methods: group means, paired differences, intervals and permutation p-values,
checked against loops written here from the definitions in ``diversity.genie.core.comparison``;
and the whole path from GENIE's similarity file to the report."""

import itertools
import json

import numpy as np
import pytest
from django.core.management import call_command

from diversity.genie.core.comparison import group_difference, group_mean
from diversity.genie.models import GenieSet
from diversity.genie.services.analyses import analyse_genie
from tests.diversity import genie_native_set as genie
from tests.diversity.test_genie_native import compute_genie_reference

A = {"p1": [0.2, 0.4, 0.9], "p2": [0.5], "p3": [0.1, 0.3], "p4": [0.8, 0.6]}
B = {"p1": [0.1, 0.2], "p2": [0.7, 0.3, 0.3], "p4": [0.2], "p5": [0.9]}


def two_stage_draws(groups: list[list[float]], rng, draws: int, extra=None):
    """Loop version of the two-stage bootstrap; ``extra`` (other groups, same prompts)
    shares the prompt picks and draws its uniforms after these."""
    n = len(groups)
    picks = rng.integers(0, n, size=(draws, n))
    widths = [max(len(g) for g in groups)] + ([max(len(g) for g in extra)] if extra else [])
    uniforms = [rng.random((draws, n, width)) for width in widths]
    sides = [groups] + ([extra] if extra else [])
    out = np.empty(draws)
    for b in range(draws):
        totals = []
        for side, u in zip(sides, uniforms, strict=True):
            prompt_means = []
            for j in range(n):
                docs = side[picks[b, j]]
                chosen = [docs[int(np.floor(u[b, j, k] * len(docs)))] for k in range(len(docs))]
                prompt_means.append(sum(chosen) / len(chosen))
            totals.append(sum(prompt_means) / n)
        out[b] = totals[0] - totals[1] if extra else totals[0]
    return out


def test_group_mean_and_its_two_stage_interval():
    found = group_mean("gpt-4o", A, draws=400, seed=5)
    prompt_means = [np.mean(v) for v in A.values()]
    assert found.mean == pytest.approx(sum(prompt_means) / 4, abs=1e-12)
    assert (found.n_prompts, found.n_documents) == (4, 8)
    draws = two_stage_draws(list(A.values()), np.random.default_rng(5), 400)
    low, high = np.percentile(draws, [2.5, 97.5])
    assert (found.ci_low, found.ci_high) == (
        pytest.approx(low, abs=1e-12),
        pytest.approx(high, abs=1e-12),
    )


def test_paired_difference_exact_permutation_over_prompts():
    found = group_difference("a", "b", A, B, draws=300, seed=2, permutations=999)
    shared = ["p1", "p2", "p4"]
    d = [np.mean(A[p]) - np.mean(B[p]) for p in shared]
    assert found.difference == pytest.approx(np.mean(d), abs=1e-12) and found.n_prompts == 3
    flips = [
        abs(np.mean([s * x for s, x in zip(signs, d, strict=True)]))
        for signs in itertools.product([1, -1], repeat=3)
    ]
    expected_p = sum(f >= abs(np.mean(d)) - 1e-12 for f in flips) / 8
    assert found.exact and found.p_value == pytest.approx(expected_p)
    draws = two_stage_draws(
        [A[p] for p in shared], np.random.default_rng(2), 300, [B[p] for p in shared]
    )
    low, high = np.percentile(draws, [2.5, 97.5])
    assert found.ci_low == pytest.approx(low, abs=1e-12) and found.ci_high == pytest.approx(
        high, abs=1e-12
    )


def test_many_prompts_draw_sign_patterns():
    rng = np.random.default_rng(0)
    a = {f"p{i}": list(rng.random(2) + 0.1) for i in range(15)}
    b = {f"p{i}": list(rng.random(3)) for i in range(15)}
    found = group_difference("a", "b", a, b, draws=50, seed=4, permutations=500)
    d = np.array([np.mean(a[p]) - np.mean(b[p]) for p in a])
    signs = np.random.default_rng(4).choice([-1, 1], size=(500, 15))
    reached = sum(abs(np.mean(row * d)) >= abs(d.mean()) - 1e-12 for row in signs)
    assert not found.exact and found.p_value == pytest.approx((1 + reached) / 501)


@pytest.mark.django_db
def test_genie_file_to_report_per_model_and_method(tmp_path, capsys):
    path = tmp_path / "similarity.jsonl"
    path.write_text(genie.jsonl(genie.rows()), "utf-8")
    call_command("import_genie", "genie-native", str(path))
    printed = capsys.readouterr().out
    assert "in the genie-similarity layout; pairs left out of the scores:" in printed
    report = analyse_genie(GenieSet.objects.get(name="genie-native"), bootstrap=200, seed=3)
    json.dumps(report, allow_nan=False)
    expected, _ = compute_genie_reference(path)
    llm = report["scores"]["llm"]
    entry = next(e for e in llm["per_document"] if e["source_document_id"] == "1")
    assert entry["prompt"] in genie.PROMPTS and entry["model"] in {"gpt-4o", "llama-3"}
    assert entry["method"] in {None, "persona"}
    assert report["left_out"]["zero"] > 0 and report["layout"] == "genie-similarity"

    expected["model"] = expected["Model_1"].str.partition("+")[0]
    expected["method"] = expected["Model_1"].str.partition("+")[2].replace("", "(none)")
    for dimension, groups in (("model", ["gpt-4o", "llama-3"]), ("method", ["(none)", "persona"])):
        table = llm["comparisons"][dimension]
        assert table["groups"] == groups
        for feature in ("Plot", "Setting"):
            rows = expected[expected["Feature"] == feature]
            by_prompt = rows.groupby([dimension, "Prompt"])["GENIE"].mean()
            means = {m["group"]: m for m in table["per_feature"][feature]["means"]}
            for group in groups:
                assert means[group]["mean"] == pytest.approx(by_prompt[group].mean(), abs=1e-12)
                low, high = means[group]["ci"]
                assert low <= means[group]["mean"] <= high
            (difference,) = table["per_feature"][feature]["differences"]
            d = by_prompt[groups[0]] - by_prompt[groups[1]]
            assert difference["difference"] == pytest.approx(d.mean(), abs=1e-12)
            assert difference["exact"] and difference["n_prompts"] == 2
            flips = [abs(s1 * d.iloc[0] + s2 * d.iloc[1]) / 2 for s1 in (1, -1) for s2 in (1, -1)]
            expected_p = sum(f >= abs(d.mean()) - 1e-12 for f in flips) / 4
            assert difference["p"] == pytest.approx(expected_p)
    q_rows = llm["per_question"]
    assert len(q_rows) == len(compute_genie_reference(path)[1])
