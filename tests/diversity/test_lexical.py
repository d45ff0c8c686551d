"""Lexical diversity (distinct-n, exact duplicates) and the TF-IDF fallback embedding."""

import math

import numpy as np
import pytest
import scipy.sparse as sp

from diversity.homogeneity.lexical import (
    distinct_n,
    duplicate_share,
    ngrams,
    normalise_response,
    pool_lexical_figures,
    tfidf_vectors,
    word_tokens,
)
from diversity.homogeneity.similarity import intra_model_similarity


def test_word_tokens_lowercase_and_drop_punctuation():
    assert word_tokens("The CAT, the cat's hat!  Über-cool 42") == [
        "the", "cat", "the", "cat", "s", "hat", "über", "cool", "42",
    ]  # fmt: skip


def test_ngrams_of_short_sequences():
    assert ngrams(["a", "b", "c"], 2) == [("a", "b"), ("b", "c")]
    assert ngrams(["a"], 2) == []
    with pytest.raises(ValueError):
        ngrams(["a"], 0)


def test_distinct_n_by_hand():
    texts = ["the cat sat", "the cat ran"]
    # unigrams: the cat sat the cat ran -> 4 distinct of 6
    assert distinct_n(texts, 1) == pytest.approx(4 / 6)
    # bigrams: (the cat) (cat sat) (the cat) (cat ran) -> 3 of 4
    assert distinct_n(texts, 2) == pytest.approx(3 / 4)
    # trigrams never cross texts: (the cat sat) (the cat ran) -> 2 of 2
    assert distinct_n(texts, 3) == 1.0


def test_distinct_n_repeats_and_empty():
    assert distinct_n(["a a a a"], 1) == 0.25
    assert distinct_n(["Same text.", "same TEXT"], 2) == 0.5
    assert math.isnan(distinct_n(["one", "two"], 2))  # no bigram anywhere
    assert math.isnan(distinct_n([], 1))


def test_duplicates_after_whitespace_and_case_normalisation():
    assert normalise_response("  Hello\n\tWORLD  ") == "hello world"
    texts = ["Hello world", "hello   WORLD", "Hello world!", "hello world\n"]
    # three normalise to "hello world", one differs by "!" -> 2 repeats of 4
    assert duplicate_share(texts) == 0.5
    assert duplicate_share(["a", "b"]) == 0.0
    assert duplicate_share(["x", "x", "x"]) == pytest.approx(2 / 3)
    assert math.isnan(duplicate_share([]))


def test_tfidf_identical_texts_have_similarity_one():
    rows = tfidf_vectors(["the cat sat on the mat", "The cat sat on the mat.", "a dog"])
    assert rows.dtype == np.float32
    assert float(rows[0] @ rows[1]) == pytest.approx(1.0, abs=1e-6)
    np.testing.assert_allclose(np.linalg.norm(rows, axis=1), 1.0, atol=1e-6)


def test_tfidf_disjoint_vocabularies_have_similarity_zero():
    rows = tfidf_vectors(["red green blue", "cats and dogs", ""])
    assert float(rows[0] @ rows[1]) == 0.0
    assert not rows[2].any()  # no token: zero row, similarity 0 to everything


def test_tfidf_weights_by_hand():
    # texts: "a b", "a c"; features a, b, c, "a b", "a c"; N = 2
    # idf(a) = ln(3/3) + 1 = 1; idf(b) = idf(c) = idf("a b") = idf("a c") = ln(3/2) + 1
    rows = tfidf_vectors(["a b", "a c"])
    rare = math.log(1.5) + 1
    norm = math.sqrt(1 + 2 * rare**2)
    assert float(rows[0] @ rows[1]) == pytest.approx(1 / norm**2, abs=1e-6)
    unigram_only = tfidf_vectors(["a b", "a c"], ngram_range=(1, 1))
    assert float(unigram_only[0] @ unigram_only[1]) == pytest.approx(1 / (1 + rare**2), abs=1e-6)


def test_tfidf_sparse_output_feeds_the_similarity_code():
    texts = ["one two three", "one two three", "four five"]
    rows = tfidf_vectors(texts, dense=False)
    assert sp.issparse(rows)
    got = intra_model_similarity(rows, np.array([0, 0, 1]))
    assert got == pytest.approx({0: 1.0})
    with pytest.raises(ValueError):
        tfidf_vectors(texts, ngram_range=(2, 1))


def reference_pool_figures(texts, groups, n_groups):
    distinct = [distinct_n(texts, n) for n in (1, 2, 3)]
    per_group = []
    for g in range(n_groups):
        own = [t for t, x in zip(texts, groups, strict=True) if x == g]
        per_group.append(
            [distinct_n(own, n) for n in (1, 2, 3)] + [duplicate_share(own)]
            if own
            else [math.nan] * 4
        )
    return np.array(distinct), duplicate_share(texts), np.array(per_group)


POOL_TEXTS = [
    "The cat sat on the mat.",
    "the CAT sat on the mat",
    "A dog\x00ran under the rug; the dog ran.",
    "",
    "Mat",
    "the cat sat",
    "  the   cat sat  ",
]
POOL_GROUPS = np.array([0, 0, 1, 1, 2, 0, 2])


@pytest.mark.parametrize("use_sets", [False, True])
def test_pool_figures_match_the_plain_definitions(monkeypatch, use_sets):
    if use_sets:  # force the set-based path meant for huge vocabularies
        monkeypatch.setattr("diversity.homogeneity.lexical._LARGEST_KEY", 1.0)
    figures = pool_lexical_figures(POOL_TEXTS, POOL_GROUPS, 4)
    distinct, duplicates, per_group = reference_pool_figures(POOL_TEXTS, POOL_GROUPS, 4)
    np.testing.assert_allclose(figures.distinct, distinct)
    assert figures.duplicate_share == pytest.approx(duplicates)
    np.testing.assert_allclose(figures.group_distinct, per_group[:, :3])
    np.testing.assert_allclose(figures.group_duplicate_share, per_group[:, 3])
    assert np.isnan(figures.group_distinct[3]).all()  # group 3 has no text


def test_pool_figures_on_random_texts():
    rng = np.random.default_rng(0)
    words = ["a", "b", "c", "d", "Á", "b."]
    texts = [" ".join(rng.choice(words, size=rng.integers(0, 9))) for _ in range(40)]
    groups = rng.integers(0, 5, size=40)
    figures = pool_lexical_figures(texts, groups, 5)
    distinct, duplicates, per_group = reference_pool_figures(texts, groups, 5)
    np.testing.assert_allclose(figures.distinct, distinct)
    np.testing.assert_allclose(figures.group_distinct, per_group[:, :3])
    np.testing.assert_allclose(figures.group_duplicate_share, per_group[:, 3])


def test_pool_figures_without_any_token():
    figures = pool_lexical_figures(["", "!!"], np.array([0, 1]), 2)
    assert np.isnan(figures.distinct).all() and np.isnan(figures.group_distinct).all()
    assert figures.duplicate_share == 0.0
