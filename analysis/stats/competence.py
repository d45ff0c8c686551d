"""Annotator competence: Dawid–Skene and MACE, fitted by EM over categorical labels.

Both models assume **one true label per item**: every annotator either reports it (with
some confusion) or guesses. On open-ended items, where people legitimately disagree, they
measure consistency with the majority, not correctness — a dense study expects
disagreement, so a low competence is a reason to look at someone's labels, never a verdict.

**Dawid–Skene** (Dawid & Skene 1979, "Maximum likelihood estimation of observer error-rates
using the EM algorithm", JRSS-C 28): item ``i`` has a true class ``z_i ~ p``; annotator ``a``
reports label ``l`` with probability ``pi_a[z, l]`` (their confusion matrix). E-step:
``T[i, k] ∝ p_k prod_{labels (a, l) of i} pi_a[k, l]``; M-step: ``p_k = mean_i T[i, k]``,
``pi_a[k, l] = (sum of T[i, k] over a's labels l + s) / (sum of T[i, k] over a's labels + K s)``
with smoothing ``s`` = :data:`SMOOTHING`. Competence: ``sum_k p_k pi_a[k, k]``, the
probability that the annotator reports the true class.

**MACE** (Hovy, Berg-Kirkpatrick, Vaswani & Hovy 2013, "Learning whom to trust with MACE",
NAACL): the true label is uniform; for each label the annotator spams with probability
``1 - theta_a``, and then draws from their own strategy ``xi_a``, else reports the true
label: ``P(l | z = k) = theta_a [l = k] + (1 - theta_a) xi_a[l]``. EM as in the paper (no
variational priors): the expected spam indicator of a label is 1 when ``l != k`` and
``(1 - theta) xi[l] / (theta + (1 - theta) xi[l])`` when ``l = k``; ``theta_a`` and ``xi_a``
are the smoothed expected shares. ``spam_share`` is the posterior mean of the spam indicator
over the annotator's labels: the share of them explained by the spamming strategy.

Both start from the items' label proportions (a soft majority vote) and stop when the
log-likelihood of the labels (Dawid–Skene: ``Σ_i log Σ_k p_k Π pi_a[k, l]``; MACE: the same
with ``P(l | z = k)`` and a uniform prior) changes by less than :data:`TOLERANCE` per label
between rounds, or after :data:`MAX_ITERATIONS` rounds.
Vectorised: Dawid–Skene's two steps are each one sparse product with the (item ×
(annotator, label)) incidence matrix of the labels; MACE's parameters are constant per
(annotator, label) cell, so its steps are a few ``np.bincount`` over the labels. Pure numpy
and scipy; no Django.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import sparse

__all__ = ["CompetenceFit", "dawid_skene", "mace", "majority_agreement"]

SMOOTHING = 0.01
TOLERANCE = 1e-8  # change of the log-likelihood per label between rounds
MAX_ITERATIONS = 50


class CompetenceFit(NamedTuple):
    """A fitted competence model; arrays per annotator (A) or item (I) over K classes."""

    competence: np.ndarray  # (A,) NaN for an annotator without labels
    posterior: np.ndarray  # (I, K) each item's class distribution (NaN rows without labels)
    spam_share: np.ndarray | None  # (A,) MACE only
    strategy: np.ndarray | None  # (A, K) MACE's spamming distribution xi_a
    confusion: np.ndarray | None  # (A, K, K) Dawid–Skene's pi_a
    iterations: int
    converged: bool


class _Layout(NamedTuple):
    """What both fits need of the labels, computed once per fit."""

    items: np.ndarray  # the labelled items, ascending
    label_item: np.ndarray  # (L,) each label's item among ``items``
    cell: np.ndarray  # (L,) each label's (annotator * K + label) cell


def _layout(item: np.ndarray, annotator: np.ndarray, label: np.ndarray, k: int) -> _Layout:
    """The labelled items and each label's place among them and among the cells.

    Item indices are small non-negative integers, so counting them finds the labelled ones
    in one pass (``np.unique`` would sort all the labels to get the same arrays).
    """
    labelled = np.bincount(item) > 0
    label_item = (np.cumsum(labelled) - 1)[item]
    return _Layout(np.flatnonzero(labelled), label_item, annotator * k + label)


def _incidence(layout: _Layout, n_cells: int) -> tuple[sparse.csr_matrix, sparse.csr_matrix]:
    """The (labelled items × cells) incidence matrix of the labels (a 1 per label) and its
    transpose, both CSR."""
    incidence = sparse.csr_matrix(
        (np.ones(layout.cell.size), (layout.label_item, layout.cell)),
        shape=(layout.items.size, n_cells),
    )
    return incidence, incidence.T.tocsr()


def _start(label: np.ndarray, k: int, layout: _Layout) -> np.ndarray:
    """Soft majority vote: each labelled item's label proportions."""
    counts = np.bincount(layout.label_item * k + label, minlength=layout.items.size * k)
    counts = counts.reshape(layout.items.size, k).astype(np.float64)
    return counts / counts.sum(axis=1, keepdims=True)


def _normalise_log(log_t: np.ndarray) -> tuple[np.ndarray, float]:
    """Rows of unnormalised log posteriors -> the posteriors and the sum over rows of their
    log-normalisers (the log-likelihood of the labels, up to a constant the caller adds).

    Works on the transpose (classes × items): a reduction over a row's few classes is then
    K - 1 vector operations over all items instead of a short loop per item, several times
    faster. The sums add a row's classes one after the other, as numpy's row reduction
    does for fewer than 8 classes (with more, it adds pairwise: the last bit may differ).
    """
    by_class = np.ascontiguousarray(log_t.T)
    top = by_class.max(axis=0)
    t = np.exp(by_class - top)
    total = t.sum(axis=0)
    return np.ascontiguousarray((t / total).T), float((np.log(total) + top).sum())


def _expand(posterior: np.ndarray, n_items: int, layout: _Layout) -> np.ndarray:
    """Posteriors of the labelled items back at their item positions (NaN elsewhere)."""
    full = np.full((n_items, posterior.shape[1]), np.nan)
    full[layout.items] = posterior
    return full


def dawid_skene(
    item: np.ndarray,
    annotator: np.ndarray,
    label: np.ndarray,
    n_items: int,
    n_annotators: int,
    n_classes: int,
    *,
    smoothing: float = SMOOTHING,
    tolerance: float = TOLERANCE,
    max_iterations: int = MAX_ITERATIONS,
) -> CompetenceFit:
    """Dawid–Skene by EM (module docstring). ``label``: class index 0..K-1 of each label."""
    item, annotator, label = (np.asarray(x, dtype=np.int64) for x in (item, annotator, label))
    k = n_classes
    layout = _layout(item, annotator, label, k)
    # Each label is a 1 at (its item, its (annotator, label) cell): both EM steps are one
    # sparse product with this matrix.
    n_cells = n_annotators * k
    incidence, incidence_t = _incidence(layout, n_cells)
    t = _start(label, k, layout)
    n_labels = max(label.size, 1)
    previous = -np.inf
    converged = False
    iterations = 0
    while iterations < max_iterations:
        iterations += 1
        # M-step: class prior and each annotator's confusion matrix (rows: true class).
        prior = t.mean(axis=0)
        counts = incidence_t @ t  # row: (annotator, reported label), columns: true class
        counts = counts.reshape(n_annotators, k, k).transpose(0, 2, 1) + smoothing
        confusion = counts / counts.sum(axis=2, keepdims=True)
        # E-step
        log_confusion = np.log(confusion).transpose(0, 2, 1).reshape(n_cells, k)
        log_t = incidence @ log_confusion
        with np.errstate(divide="ignore"):  # a class nobody chose keeps posterior 0
            log_t += np.log(prior)
        t, log_likelihood = _normalise_log(log_t)
        if abs(log_likelihood - previous) < tolerance * n_labels:
            converged = True
            break
        previous = log_likelihood
    prior = t.mean(axis=0)
    competence = np.einsum("k,akk->a", prior, confusion)
    competence[np.bincount(annotator, minlength=n_annotators) == 0] = np.nan
    return CompetenceFit(
        competence,
        _expand(t, n_items, layout),
        None,
        None,
        confusion,
        iterations,
        converged,
    )


def mace(
    item: np.ndarray,
    annotator: np.ndarray,
    label: np.ndarray,
    n_items: int,
    n_annotators: int,
    n_classes: int,
    *,
    smoothing: float = SMOOTHING,
    tolerance: float = TOLERANCE,
    max_iterations: int = MAX_ITERATIONS,
) -> CompetenceFit:
    """MACE by EM (module docstring). ``label``: class index 0..K-1 of each label.

    Starts from ``theta = 1/2``, a uniform ``xi`` and the soft majority vote as posteriors.
    """
    item, annotator, label = (np.asarray(x, dtype=np.int64) for x in (item, annotator, label))
    k = n_classes
    layout = _layout(item, annotator, label, k)
    n_cells = n_annotators * k
    per_annotator = np.bincount(annotator, minlength=n_annotators).astype(np.float64)
    # theta and xi are constant per (annotator, label) cell: work per cell, and per label
    # only gather the posterior of the reported class and scatter the cell's factor.
    truth_slot = layout.label_item * k + label
    cell_annotator = np.repeat(np.arange(n_annotators), k)
    given = np.bincount(layout.cell, minlength=n_cells).astype(np.float64)
    theta = np.full(n_annotators, 0.5)
    xi = np.full((n_annotators, k), 1.0 / k)
    t = _start(label, k, layout)
    n_labels = max(label.size, 1)
    previous = -np.inf
    converged = False
    iterations = 0
    while iterations < max_iterations:
        iterations += 1
        # M-step: a label is spam with probability 1 - p_true (1 - spam_if_true), p_true the
        # posterior of its own class; summed per cell.
        p_true = np.bincount(layout.cell, np.take(t.ravel(), truth_slot), minlength=n_cells)
        honest = p_true * (1 - _spam_if_true(theta, xi).ravel())
        theta = (np.bincount(cell_annotator, honest, minlength=n_annotators) + smoothing) / (
            per_annotator + 2 * smoothing
        )
        xi = (given - honest).reshape(n_annotators, k) + smoothing
        xi /= xi.sum(axis=1, keepdims=True)
        # E-step: P(l | z = k) = theta [l = k] + (1 - theta) xi[l], uniform prior on z. A
        # label's factor is the same guess for every k but its own, so up to a constant per
        # item log T[i, k] sums log(1 + theta / ((1 - theta) xi[l])) over its labels l = k.
        with np.errstate(divide="ignore"):
            boost = np.log1p(theta[:, None] / ((1 - theta)[:, None] * xi)).ravel()
        log_t = np.bincount(truth_slot, np.take(boost, layout.cell), minlength=t.size)
        t, log_likelihood = _normalise_log(log_t.reshape(t.shape))
        # the factor every class shares: each label's guess probability. A sum of products,
        # not ``@``: a BLAS dot of this length wakes OpenBLAS's threads, which then spin
        # through the rest of the round and double the CPU time of the fit.
        log_likelihood += float(np.sum(given * np.log((1 - theta)[:, None] * xi).ravel()))
        if abs(log_likelihood - previous) < tolerance * n_labels:
            converged = True
            break
        previous = log_likelihood
    p_true = t[layout.label_item, label]
    spam = 1 - p_true * (1 - np.take(_spam_if_true(theta, xi).ravel(), layout.cell))
    spam_share = np.bincount(annotator, spam, minlength=n_annotators) / np.maximum(per_annotator, 1)
    missing = per_annotator == 0
    theta = np.where(missing, np.nan, theta)
    spam_share[missing] = np.nan
    return CompetenceFit(
        theta, _expand(t, n_items, layout), spam_share, xi, None, iterations, converged
    )


def _spam_if_true(theta: np.ndarray, xi: np.ndarray) -> np.ndarray:
    """``(A, K)``: the probability that a label ``l`` of annotator ``a`` that is the true
    class was a guess all the same: ``(1 - theta) xi[l] / (theta + (1 - theta) xi[l])``."""
    guess = (1 - theta)[:, None] * xi
    return guess / (theta[:, None] + guess)


def majority_agreement(
    item: np.ndarray, annotator: np.ndarray, label: np.ndarray, posterior: np.ndarray,
    n_annotators: int,
) -> np.ndarray:  # fmt: skip
    """Per annotator, the share of their labels equal to the item's most probable class
    (ties: the lowest class); NaN without labels."""
    modal = np.argmax(np.nan_to_num(posterior, nan=-1.0), axis=1)
    agree = (modal[item] == label).astype(np.float64)
    given = np.bincount(annotator, minlength=n_annotators)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(
            given > 0, np.bincount(annotator, agree, minlength=n_annotators) / given, np.nan
        )
