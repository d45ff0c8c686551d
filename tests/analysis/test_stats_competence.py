"""Dawid–Skene and MACE against small reference implementations written here, label by label
in plain Python loops from the papers' formulas (Dawid & Skene 1979; Hovy et al. 2013)."""

import math
from collections import defaultdict

import numpy as np
import pytest

from analysis.stats.competence import SMOOTHING, dawid_skene, mace, majority_agreement


def soft_majority(labels, n_items, k):
    counts = defaultdict(lambda: [0.0] * k)
    for i, _, lab in labels:
        counts[i][lab] += 1
    return {i: [c / sum(row) for c in row] for i, row in counts.items()}


def reference_dawid_skene(labels, n_items, n_annotators, k, iterations):
    t = soft_majority(labels, n_items, k)
    for _ in range(iterations):
        prior = [sum(t[i][c] for i in t) / len(t) for c in range(k)]
        confusion = []
        for a in range(n_annotators):
            rows = []
            for true in range(k):
                row = [SMOOTHING] * k
                for i, who, lab in labels:
                    if who == a:
                        row[lab] += t[i][true]
                total = sum(row)
                rows.append([v / total for v in row])
            confusion.append(rows)
        new = {}
        for i in t:
            logs = [math.log(prior[c]) for c in range(k)]
            for item, who, lab in labels:
                if item == i:
                    for c in range(k):
                        logs[c] += math.log(confusion[who][c][lab])
            top = max(logs)
            weights = [math.exp(v - top) for v in logs]
            new[i] = [w / sum(weights) for w in weights]
        t = new
    prior = [sum(t[i][c] for i in t) / len(t) for c in range(k)]
    competence = [sum(prior[c] * confusion[a][c][c] for c in range(k)) for a in range(n_annotators)]
    return t, competence


def reference_mace(labels, n_items, n_annotators, k, iterations):
    t = soft_majority(labels, n_items, k)
    theta = [0.5] * n_annotators
    xi = [[1 / k] * k for _ in range(n_annotators)]

    def spam_probability(i, who, lab):
        # P(spam | label, posterior): sum over the true class c of T[i, c] P(spam | c, label)
        total = 0.0
        for c in range(k):
            if c != lab:
                total += t[i][c]
            else:
                guess = (1 - theta[who]) * xi[who][lab]
                total += t[i][c] * guess / (theta[who] + guess)
        return total

    for _ in range(iterations):
        honest = [SMOOTHING] * n_annotators
        spammed = [[SMOOTHING] * k for _ in range(n_annotators)]
        given = [0] * n_annotators
        for i, who, lab in labels:
            spam = spam_probability(i, who, lab)
            honest[who] += 1 - spam
            spammed[who][lab] += spam
            given[who] += 1
        theta = [honest[a] / (given[a] + 2 * SMOOTHING) for a in range(n_annotators)]
        xi = [[v / sum(row) for v in row] for row in spammed]
        new = {}
        for i in t:
            logs = [0.0] * k
            for item, who, lab in labels:
                if item == i:
                    for c in range(k):
                        p = theta[who] * (c == lab) + (1 - theta[who]) * xi[who][lab]
                        logs[c] += math.log(p)
            top = max(logs)
            weights = [math.exp(v - top) for v in logs]
            new[i] = [w / sum(weights) for w in weights]
        t = new
    spam_share = [0.0] * n_annotators
    counts = [0] * n_annotators
    for i, who, lab in labels:
        spam_share[who] += spam_probability(i, who, lab)
        counts[who] += 1
    return t, theta, [s / c for s, c in zip(spam_share, counts, strict=True)]


def simulated(seed, n_items=30, n_annotators=8, k=5, per_item=5, spammers=(6, 7)):
    rng = np.random.default_rng(seed)
    truth = rng.integers(0, k, n_items)
    labels = []
    for i in range(n_items):
        for a in rng.choice(n_annotators, per_item, replace=False):
            if a in spammers:
                lab = 0 if a == 6 else int(rng.integers(0, k))  # one always says 0
            else:
                lab = int(truth[i]) if rng.random() < 0.8 else int(rng.integers(0, k))
            labels.append((i, int(a), lab))
    return truth, labels


def arrays(labels):
    item, annotator, label = (np.array(column) for column in zip(*labels, strict=True))
    return item, annotator, label


@pytest.mark.parametrize("seed", [0, 1])
def test_dawid_skene_matches_the_reference(seed):
    truth, labels = simulated(seed)
    expected_t, expected_competence = reference_dawid_skene(labels, 30, 8, 5, 12)
    fit = dawid_skene(*arrays(labels), 30, 8, 5, tolerance=0, max_iterations=12)
    assert fit.iterations == 12 and not fit.converged
    for i, row in expected_t.items():
        assert fit.posterior[i] == pytest.approx(row, abs=1e-10)
    assert fit.competence == pytest.approx(expected_competence, abs=1e-10)


@pytest.mark.parametrize("seed", [0, 3])
def test_mace_matches_the_reference(seed):
    truth, labels = simulated(seed)
    expected_t, expected_theta, expected_spam = reference_mace(labels, 30, 8, 5, 12)
    fit = mace(*arrays(labels), 30, 8, 5, tolerance=0, max_iterations=12)
    for i, row in expected_t.items():
        assert fit.posterior[i] == pytest.approx(row, abs=1e-10)
    assert fit.competence == pytest.approx(expected_theta, abs=1e-10)
    assert fit.spam_share == pytest.approx(expected_spam, abs=1e-10)


def test_spammers_get_low_competence_and_the_truth_is_recovered():
    truth, labels = simulated(5, n_items=300, per_item=6)
    item, annotator, label = arrays(labels)
    by_mace = mace(item, annotator, label, 300, 8, 5)
    by_ds = dawid_skene(item, annotator, label, 300, 8, 5)
    for fit in (by_mace, by_ds):
        assert max(fit.competence[6:]) < min(fit.competence[:6])
        assert (np.argmax(fit.posterior, axis=1) == truth).mean() > 0.95
    assert min(by_mace.spam_share[6:]) > 0.6 > 0.4 > max(by_mace.spam_share[:6])
    assert np.argmax(by_mace.strategy[6]) == 0  # the annotator who always says 0
    assert by_ds.confusion[6][:, 0] == pytest.approx(1, abs=0.05)


def test_an_annotator_without_labels_has_no_competence():
    labels = [(0, 0, 1), (0, 1, 1), (1, 0, 2), (1, 1, 2)]
    item, annotator, label = arrays(labels)
    for fit in (
        dawid_skene(item, annotator, label, 3, 3, 3),
        mace(item, annotator, label, 3, 3, 3),
    ):
        assert np.isnan(fit.competence[2]) and np.isnan(fit.posterior[2]).all()


def test_majority_agreement_counts_labels_equal_to_the_modal_class():
    item = np.array([0, 0, 0, 1, 1])
    annotator = np.array([0, 1, 2, 0, 1])
    label = np.array([1, 1, 2, 0, 2])
    posterior = np.array([[0, 2, 1], [1, 0, 1]], dtype=float)  # item 1: tie, lowest class 0
    agreement = majority_agreement(item, annotator, label, posterior, 4)
    assert agreement[:3] == pytest.approx([1.0, 0.5, 0.0])
    assert np.isnan(agreement[3])
