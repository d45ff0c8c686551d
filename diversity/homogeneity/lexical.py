"""Lexical diversity of a set of responses, and a TF-IDF stand-in for an embedding model.

Tokens are lowercased word tokens: maximal runs of Unicode word characters (``\\w+``) of
``text.lower()``; punctuation and whitespace only separate tokens. n-grams never cross
from one response into the next.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = [
    "DISTINCT_ORDERS",
    "PoolLexicalFigures",
    "distinct_n",
    "distinct_n_from_tokens",
    "duplicate_share",
    "ngrams",
    "normalise_response",
    "pool_lexical_figures",
    "tfidf_vectors",
    "word_tokens",
]

DISTINCT_ORDERS = (1, 2, 3)

_WORD = re.compile(r"\w+")
# a character \w never matches, used to mark where one text ends and the next begins
_TEXT_BREAK = "\x00"
_WORD_OR_BREAK = re.compile(r"\w+|\x00")
# n-gram keys (times the number of groups) must stay below this to fit int64
_LARGEST_KEY = 2.0**62


def word_tokens(text: str) -> list[str]:
    """Lowercased word tokens of ``text`` (runs of Unicode word characters)."""
    return _WORD.findall(text.lower())


def ngrams(tokens: Sequence[str], n: int) -> list[tuple[str, ...]]:
    """The ``len(tokens) - n + 1`` contiguous n-grams of one token sequence (none if shorter)."""
    if n < 1:
        raise ValueError("n must be at least 1")
    return list(zip(*(tokens[i:] for i in range(n)), strict=False))


def distinct_n_from_tokens(token_lists: Iterable[Sequence[str]], n: int) -> float:
    """:func:`distinct_n` for texts already split by :func:`word_tokens`."""
    seen: set[tuple[str, ...]] = set()
    total = 0
    for tokens in token_lists:
        grams = ngrams(tokens, n)
        total += len(grams)
        seen.update(grams)
    return len(seen) / total if total else math.nan


def distinct_n(texts: Iterable[str], n: int) -> float:
    """distinct-n of a set of texts = distinct n-grams / total n-grams.

    ``|union_t G_n(t)| / sum_t |G_n(t)|`` where ``G_n(t)`` is the list of n-grams of text t
    (with repeats in the denominator, as a set in the numerator). 1 when no n-gram repeats
    anywhere in the set, near 0 when the texts repeat one another. NaN when the texts hold
    no n-gram at all (every text shorter than n tokens).
    """
    return distinct_n_from_tokens((word_tokens(t) for t in texts), n)


def normalise_response(text: str) -> str:
    """Text compared for exact duplicates: whitespace runs collapsed to one space, ends
    stripped, case folded."""
    return " ".join(text.split()).casefold()


def duplicate_share(texts: Iterable[str]) -> float:
    """Share of responses that exactly repeat an earlier response of the set.

    ``(n - u) / n`` with u the number of distinct texts after :func:`normalise_response`:
    0 when all differ, ``(n - 1) / n`` when all are the same. NaN for an empty set.
    """
    normalised = [normalise_response(t) for t in texts]
    if not normalised:
        return math.nan
    return (len(normalised) - len(set(normalised))) / len(normalised)


@dataclass(frozen=True)
class PoolLexicalFigures:
    """Lexical figures of one query's pool, over all of it and per group (model).

    ``distinct[o]``: distinct-n with n = ``DISTINCT_ORDERS[o]`` over all texts;
    ``group_distinct[g, o]``: the same over group g's texts only; ``duplicate_share`` and
    ``group_duplicate_share[g]`` likewise. NaN where undefined (no n-gram; empty group).
    """

    distinct: np.ndarray
    duplicate_share: float
    group_distinct: np.ndarray
    group_duplicate_share: np.ndarray


def _token_ids(texts: Sequence[str]) -> tuple[np.ndarray, np.ndarray, int]:
    """Every word token of the pool as an integer id, with the index of its text."""
    joined = _TEXT_BREAK.join(t.replace(_TEXT_BREAK, " ") for t in texts).lower()
    tokens = _WORD_OR_BREAK.findall(joined)
    # ids in order of first appearance, the text break first (id 0); dict.fromkeys and
    # map keep the per-token work in C
    vocabulary = {t: i for i, t in enumerate(dict.fromkeys([_TEXT_BREAK, *tokens]))}
    ids = np.fromiter(map(vocabulary.__getitem__, tokens), np.int64, len(tokens))
    breaks = ids == 0
    text_of_token = np.cumsum(breaks)
    return ids[~breaks], text_of_token[~breaks], len(vocabulary)


def _count_distinct(keys: np.ndarray) -> int:
    if keys.size == 0:
        return 0
    ordered = np.sort(keys)
    return int(np.count_nonzero(ordered[1:] != ordered[:-1])) + 1


def _count_distinct_by_group(keys: np.ndarray, groups: np.ndarray, n_groups: int, base: int):
    """Distinct keys within each group: sort (group, key) pairs packed as one integer."""
    packed = np.sort(groups * base + keys)
    first = np.ones(packed.size, dtype=bool)
    first[1:] = packed[1:] != packed[:-1]
    return np.bincount(packed[first] // base, minlength=n_groups)


def pool_lexical_figures(
    texts: Sequence[str], groups: np.ndarray, n_groups: int
) -> PoolLexicalFigures:
    """distinct-n (n = 1, 2, 3) and duplicate shares of a pool and of each group in it.

    Same definitions as :func:`distinct_n` and :func:`duplicate_share`; ``groups[i]`` in
    0..n_groups-1 is the group (model) of text i. Tokens become integer ids and an n-gram
    one integer ``sum_j id_j * V^(n-1-j)`` (V = vocabulary size of the pool), so distinct
    n-grams are counted by sorting integers; a pool whose vocabulary is too large for that
    to fit 63 bits is counted with sets instead.
    """
    groups = np.asarray(groups, dtype=np.int64)
    ids, text_of_token, base = _token_ids(texts)
    group_of_token = groups[text_of_token]
    distinct = np.full(len(DISTINCT_ORDERS), np.nan)
    group_distinct = np.full((n_groups, len(DISTINCT_ORDERS)), np.nan)
    for o, order in enumerate(DISTINCT_ORDERS):
        span = ids.size - order + 1
        if span <= 0:
            continue
        # an n-gram starting at i is kept when its last token is still in the same text
        valid = text_of_token[:span] == text_of_token[order - 1 :]
        totals = np.bincount(group_of_token[:span][valid], minlength=n_groups)
        if float(base) ** order * n_groups >= _LARGEST_KEY:
            seen, unique_per_group = _distinct_with_sets(texts, groups, n_groups, order)
        else:
            keys = np.zeros(span, dtype=np.int64)
            for j in range(order):
                keys = keys * base + ids[j : j + span]
            keys = keys[valid]
            seen = _count_distinct(keys)
            unique_per_group = _count_distinct_by_group(
                keys, group_of_token[:span][valid], n_groups, base**order
            )
        if totals.sum():
            distinct[o] = seen / totals.sum()
        with np.errstate(invalid="ignore", divide="ignore"):
            group_distinct[:, o] = np.where(totals > 0, unique_per_group / totals, np.nan)
    normalised = [normalise_response(t) for t in texts]
    group_duplicates = np.full(n_groups, np.nan)
    for g in range(n_groups):
        own = [normalised[i] for i in np.flatnonzero(groups == g)]
        if own:
            group_duplicates[g] = (len(own) - len(set(own))) / len(own)
    pool_duplicates = (
        (len(normalised) - len(set(normalised))) / len(normalised) if texts else np.nan
    )
    return PoolLexicalFigures(
        distinct=distinct,
        duplicate_share=pool_duplicates,
        group_distinct=group_distinct,
        group_duplicate_share=group_duplicates,
    )


def _distinct_with_sets(texts, groups, n_groups, order) -> tuple[int, np.ndarray]:
    token_lists = [word_tokens(t) for t in texts]
    union: set[tuple[str, ...]] = set()
    per_group = np.zeros(n_groups, dtype=np.int64)
    for g in range(n_groups):
        seen = {gram for i in np.flatnonzero(groups == g) for gram in ngrams(token_lists[i], order)}
        per_group[g] = len(seen)
        union |= seen
    return len(union), per_group


def tfidf_vectors(
    texts: Sequence[str],
    ngram_range: tuple[int, int] = (1, 2),
    dense: bool = True,
    dtype=np.float32,
):
    """TF-IDF rows of a set of texts (one query's pool): the lexical fallback embedding.

    Features are the word n-grams with n in ``ngram_range`` (default uni- and bigrams),
    vocabulary taken from ``texts`` alone. For text t and feature f:
    ``w(t, f) = tf(t, f) * idf(f)``, tf = raw count, ``idf(f) = ln((1 + N) / (1 + df(f))) + 1``
    (N texts, df = texts containing f; the +1s keep a feature shared by every text above
    zero, so identical texts still match). Each row is then L2-normalised, so a dot
    product is the cosine similarity: identical texts give 1, texts sharing no feature 0.
    A text without tokens gives a zero row.

    Returns a dense ``dtype`` array (n x features) or, with ``dense=False``, a CSR matrix.
    """
    low, high = ngram_range
    if not 1 <= low <= high:
        raise ValueError("ngram_range must satisfy 1 <= low <= high")
    vocabulary: dict[tuple[str, ...], int] = {}
    rows: list[int] = []
    columns: list[int] = []
    values: list[float] = []
    for row, text in enumerate(texts):
        tokens = word_tokens(text)
        counts: Counter[tuple[str, ...]] = Counter()
        for n in range(low, high + 1):
            counts.update(ngrams(tokens, n))
        for feature, count in counts.items():
            rows.append(row)
            columns.append(vocabulary.setdefault(feature, len(vocabulary)))
            values.append(count)
    n_texts = len(texts)
    counts_matrix = sp.csr_matrix(
        (np.asarray(values, dtype=np.float64), (rows, columns)),
        shape=(n_texts, len(vocabulary)),
    )
    document_frequency = np.bincount(np.asarray(columns, dtype=np.int64), minlength=len(vocabulary))
    idf = np.log((1.0 + n_texts) / (1.0 + document_frequency)) + 1.0
    weighted = counts_matrix @ sp.diags(idf)
    norms = np.sqrt(np.asarray(weighted.multiply(weighted).sum(axis=1)).ravel())
    scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    weighted = sp.csr_matrix(sp.diags(scale) @ weighted, dtype=dtype)
    return weighted.toarray() if dense else weighted
