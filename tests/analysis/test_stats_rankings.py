"""Model rankings: Bradley–Terry–Davidson fits, cluster bootstrap, Kendall tau, mean ratings.

Oracles: closed-form maxima of small tournaments, a Davidson log-likelihood written here and
maximised by ``scipy.optimize``, and the ``choix`` package (MIT) for plain Bradley–Terry.
"""

import choix
import numpy as np
import pytest
from scipy import optimize, stats

from analysis.stats.bradley_terry import davidson_fit_many
from analysis.stats.rankings import (
    davidson_fit,
    kendall_tau_b,
    mean_rating_rankings,
    pairwise_rankings,
    win_probabilities,
)


def davidson_log_likelihood(theta, log_nu, wins, ties):
    """Sum over ordered pairs, written from Davidson (1970) eq. 2.1 without shortcuts."""
    total = 0.0
    nu = np.exp(log_nu)
    for i in range(len(theta)):
        for j in range(len(theta)):
            if i == j:
                continue
            pi, pj = np.exp(theta[i]), np.exp(theta[j])
            denominator = pi + pj + nu * np.sqrt(pi * pj)
            total += wins[i, j] * np.log(pi / denominator)
            if i < j:
                total += ties[i, j] * np.log(nu * np.sqrt(pi * pj) / denominator)
    return total


def simulate_votes(rng, theta, nu, n_votes):
    m = len(theta)
    a = rng.integers(0, m, n_votes)
    b = (a + rng.integers(1, m, n_votes)) % m
    pa, pb = np.exp(theta[a]), np.exp(theta[b])
    pt = nu * np.sqrt(pa * pb)
    u = rng.random(n_votes) * (pa + pb + pt)
    value = np.where(u < pa, rng.choice([1, 2], n_votes), np.where(u < pa + pb, -1, 0))
    return a, b, value


def test_two_models_have_the_closed_form_maximum():
    # 6 wins of model 0, 3 of model 1, 4 ties: the saturated multinomial is the maximum, so
    # pi_0 / pi_1 = 6 / 3 and P(tie) / P(0 wins) = nu sqrt(pi_1 / pi_0) = 4 / 6.
    wins = np.array([[0.0, 6.0], [3.0, 0.0]])
    ties = np.array([[0.0, 4.0], [4.0, 0.0]])
    fit = davidson_fit(wins, ties)
    assert fit.reason is None
    assert fit.log_strength == pytest.approx([np.log(2) / 2, -np.log(2) / 2], abs=1e-12)
    assert fit.tie_parameter == pytest.approx(4 / np.sqrt(6 * 3), abs=1e-12)


def test_balanced_cycle_has_equal_strengths_and_nu_from_the_tie_share():
    # Every pair: 5 wins each way and 3 ties. By symmetry theta = 0; then
    # P(tie) = nu / (2 + nu) = 3 / 13 gives nu = 3 / 5.
    wins = np.full((3, 3), 5.0)
    np.fill_diagonal(wins, 0)
    ties = np.full((3, 3), 3.0)
    np.fill_diagonal(ties, 0)
    fit = davidson_fit(wins, ties)
    assert fit.log_strength == pytest.approx([0, 0, 0], abs=1e-12)
    assert fit.tie_parameter == pytest.approx(0.6, abs=1e-12)


def test_davidson_fit_is_the_maximum_of_an_independent_likelihood():
    wins = np.array([[0, 7, 3, 9], [4, 0, 6, 2], [5, 3, 0, 8], [1, 6, 2, 0]], dtype=float)
    ties = np.array([[0, 2, 4, 1], [2, 0, 3, 0], [4, 3, 0, 5], [1, 0, 5, 0]], dtype=float)
    fit = davidson_fit(wins, ties)

    def negative(free):
        theta = np.append(free[:3], -free[:3].sum())  # sum to zero
        return -davidson_log_likelihood(theta, free[3], wins, ties)

    found = optimize.minimize(negative, np.zeros(4), method="BFGS", options={"gtol": 1e-10})
    theta = np.append(found.x[:3], -found.x[:3].sum())
    assert fit.log_strength.sum() == pytest.approx(0, abs=1e-12)
    assert fit.log_strength == pytest.approx(theta, abs=1e-6)
    assert fit.tie_parameter == pytest.approx(np.exp(found.x[3]), rel=1e-6)
    best = davidson_log_likelihood(fit.log_strength, np.log(fit.tie_parameter), wins, ties)
    assert best >= -found.fun - 1e-9


def test_plain_bradley_terry_matches_choix():
    rng = np.random.default_rng(11)
    theta = rng.normal(size=7)
    a, b, value = simulate_votes(rng, theta, 0.0, 4000)
    winners = np.where(value > 0, a, b)
    losers = np.where(value > 0, b, a)
    wins = np.zeros((7, 7))
    np.add.at(wins, (winners, losers), 1)
    fit = davidson_fit(wins)
    assert fit.tie_parameter == 0
    oracle = choix.ilsr_pairwise(7, list(zip(winners, losers, strict=True)), alpha=0, tol=1e-13)
    assert fit.log_strength == pytest.approx(oracle - oracle.mean(), abs=1e-9)


def test_a_model_that_never_loses_has_no_maximum():
    wins = np.array([[0, 4, 3], [0, 0, 2], [0, 1, 0]], dtype=float)
    fit = davidson_fit(wins)
    assert fit.log_strength is None
    assert "never lose" in fit.reason
    # One tie against the winner bounds its strength: the maximum exists again.
    ties = np.zeros((3, 3))
    ties[0, 1] = ties[1, 0] = 1
    assert davidson_fit(wins, ties).log_strength is not None


def test_a_winner_and_a_loser_each_tied_with_a_third_have_no_finite_maximum():
    # B always beats A, and each ties C once: the graph is strongly connected, yet B / A and
    # nu grow together without bound (every outcome's probability tends to 1)
    wins = np.array([[0, 0, 0], [7, 0, 0], [0, 0, 0]], dtype=float)
    ties = np.array([[0, 0, 1], [0, 0, 1], [1, 1, 0]], dtype=float)
    fit = davidson_fit(wins, ties)
    assert fit.log_strength is None and "no finite maximum" in fit.reason
    bounded_wins = wins.copy()
    bounded_wins[0, 1] = 1  # A beats B once: the maximum exists
    start = davidson_fit(bounded_wins, ties).log_strength
    assert start is not None
    out, fitted = davidson_fit_many(np.stack([wins, bounded_wins]), np.stack([ties, ties]), start)
    assert fitted.tolist() == [False, True]
    assert np.isnan(out[0]).all() and out[1] == pytest.approx(start, abs=1e-8)


def test_resamples_without_a_finite_maximum_leave_the_intervals_to_the_others():
    # seven annotators prefer B to A, two call A and C (B and C) a tie, one prefers A to B:
    # a resample by annotator without the last has no finite maximum
    a = np.array([0] * 7 + [0, 1, 0])
    b = np.array([1] * 7 + [2, 2, 1])
    value = np.array([-1] * 7 + [0, 0, 1])
    annotator = np.arange(10)
    result = pairwise_rankings(a, b, value, annotator, 3, 10, n_resamples=200, seed=3)
    assert result.fit.log_strength is not None
    assert result.ranking.rank.tolist() == [3, 1, 2]
    assert 0 < result.ranking.n_resamples_used < 200  # those without a maximum left out
    assert np.isfinite(result.ranking.ci).all()


def test_win_probabilities_with_the_tie_probability_sum_to_one():
    theta = np.array([0.5, -0.2, -0.3])
    probability = win_probabilities(theta, 0.7)
    pi = np.exp(theta)
    d01 = pi[0] + pi[1] + 0.7 * np.sqrt(pi[0] * pi[1])
    assert probability[0, 1] == pytest.approx(pi[0] / d01)
    tie = 0.7 * np.sqrt(pi[0] * pi[1]) / d01
    assert probability[0, 1] + probability[1, 0] + tie == pytest.approx(1)
    assert np.isnan(probability[2, 2])


def test_kendall_tau_b_matches_scipy_with_ties():
    rng = np.random.default_rng(4)
    x = rng.integers(0, 4, size=(30, 6)).astype(float)
    y = rng.integers(0, 4, size=(30, 6)).astype(float)
    ours = kendall_tau_b(x, y)
    for row in range(30):
        expected = stats.kendalltau(x[row], y[row]).statistic
        if np.isnan(expected):
            assert np.isnan(ours[row])
        else:
            assert ours[row] == pytest.approx(expected)


def test_strengths_and_ranks_come_with_intervals_and_subset_tau():
    rng = np.random.default_rng(5)
    theta = np.array([-1.0, -0.3, 0.4, 0.9])
    a, b, value = simulate_votes(rng, theta, 0.4, 3000)
    annotator = rng.integers(0, 60, a.size)
    reversed_half = rng.random(a.size) < 0.25
    flipped = value.copy()
    flipped[reversed_half] = -value[reversed_half]  # within the subset, the order reverses
    result = pairwise_rankings(
        a, b, flipped, annotator, 4, 60, {"reversed": reversed_half}, n_resamples=200, seed=1
    )
    assert result.ranking.rank.tolist() == [4, 3, 2, 1]
    assert np.all(result.ranking.ci[:, 0] <= result.fit.log_strength)
    assert np.all(result.fit.log_strength <= result.ranking.ci[:, 1])
    fit, ranking, votes, comparison = result.by_subset["reversed"]
    assert ranking.rank.tolist() == [1, 2, 3, 4]
    assert comparison.tau == pytest.approx(-1)
    assert votes.sum() == 2 * reversed_half.sum()
    again = pairwise_rankings(a, b, flipped, annotator, 4, 60, n_resamples=200, seed=1)
    assert np.array_equal(again.ranking.ci, result.ranking.ci)  # the seed fixes the draws


def test_cluster_bootstrap_is_wider_when_one_annotator_casts_half_the_votes():
    rng = np.random.default_rng(8)
    theta = np.zeros(3)
    a, b, value = simulate_votes(rng, theta, 0.3, 2000)
    annotator = rng.integers(1, 40, a.size)
    heavy = np.arange(a.size) < a.size // 2
    annotator[heavy] = 0
    # The heavy annotator always prefers model 0 when it is shown.
    value[heavy & (a == 0)] = 2
    value[heavy & (b == 0)] = -2
    by_person = pairwise_rankings(a, b, value, annotator, 3, 40, n_resamples=300, seed=2)
    by_vote = pairwise_rankings(a, b, value, np.arange(a.size), 3, a.size, n_resamples=300, seed=2)
    person_width = np.diff(by_person.ranking.ci, axis=1).ravel()
    vote_width = np.diff(by_vote.ranking.ci, axis=1).ravel()
    assert np.all(person_width > 2 * vote_width)


def test_simulated_strengths_are_recovered_within_their_intervals():
    theta = np.array([-0.8, -0.4, 0.0, 0.3, 0.9])
    theta -= theta.mean()
    covered = 0
    for seed in range(50):
        rng = np.random.default_rng(1000 + seed)
        a, b, value = simulate_votes(rng, theta, 0.5, 800)
        annotator = rng.integers(0, 40, a.size)
        result = pairwise_rankings(a, b, value, annotator, 5, 40, n_resamples=200, seed=seed)
        low, high = result.ranking.ci[:, 0], result.ranking.ci[:, 1]
        covered += int(((low <= theta) & (theta <= high)).sum())
    share = covered / (50 * theta.size)
    assert share >= 0.90, share


def test_mean_ratings_and_annotator_centred_ratings():
    # Annotator 0 is harsh, 1 lenient, both rate model 1 one point above model 0; annotator
    # 2 rates model 0 only.
    model = np.array([0, 1, 0, 1, 0])
    value = np.array([1.0, 2.0, 4.0, 5.0, 3.0])
    annotator = np.array([0, 0, 1, 1, 2])
    result = mean_rating_rankings(model, value, annotator, 2, 3, n_resamples=0)
    assert result.mean.score == pytest.approx([8 / 3, 3.5])
    # annotator means 1.5, 4.5, 3 -> model 0: -0.5, -0.5, 0; model 1: 0.5, 0.5
    assert result.centred.score == pytest.approx([-1 / 3, 0.5])
    assert result.n_labels.tolist() == [3, 2]
    assert result.n_annotators.tolist() == [3, 2]
    assert result.mean.rank.tolist() == [2, 1]
    assert np.isnan(result.mean.ci).all()  # no resamples, no interval


def test_mean_rating_intervals_resample_annotators():
    rng = np.random.default_rng(3)
    model = rng.integers(0, 3, 3000)
    annotator = rng.integers(0, 50, 3000)
    harshness = rng.normal(0, 1, 50)
    value = np.clip(np.round(3 + 0.5 * model + harshness[annotator]), 1, 5)
    half = rng.random(3000) < 0.5
    result = mean_rating_rankings(
        model, value, annotator, 3, 50, {"half": half}, n_resamples=300, seed=0
    )
    ci = result.mean.ci
    assert np.all((ci[:, 0] <= result.mean.score) & (result.mean.score <= ci[:, 1]))
    assert result.mean.rank.tolist() == [3, 2, 1]
    # by hand, one resample: annotators drawn as the report's generator draws them
    draw = np.random.default_rng(0).integers(0, 50, size=(300, 50))[0]
    times = np.bincount(draw, minlength=50)
    weight = times[annotator]
    by_hand = np.bincount(model, weight * value, 3) / np.bincount(model, weight, 3)
    single = mean_rating_rankings(model, value, annotator, 3, 50, n_resamples=1, seed=0)
    assert single.mean.ci[:, 0] == pytest.approx(by_hand)
    assert result.by_subset["half"][3].tau == pytest.approx(1.0)


@pytest.mark.parametrize("tie_probability", [0.3, 0.0])
def test_many_fits_at_once_equal_the_fits_one_by_one(tie_probability):
    from analysis.stats.bradley_terry import davidson_fit_many

    rng = np.random.default_rng(9)
    theta = np.array([-0.6, 0.1, 0.2, 0.7])
    rows = []
    for _ in range(12):
        a, b, value = simulate_votes(rng, theta, tie_probability, int(rng.integers(30, 300)))
        wins, ties = np.zeros((4, 4)), np.zeros((4, 4))
        np.add.at(
            wins, (np.where(value > 0, a, b)[value != 0], np.where(value > 0, b, a)[value != 0]), 1
        )
        np.add.at(ties, (a[value == 0], b[value == 0]), 1)
        rows.append((wins, ties + ties.T))
    # a tally in which model 3 never loses: no maximum, left to the caller
    never = np.array([[0, 2, 1, 0], [1, 0, 2, 0], [3, 1, 0, 0], [4, 5, 2, 0]], dtype=float)
    rows.append((never, np.zeros((4, 4))))
    wins = np.stack([w for w, _ in rows])
    ties = np.stack([t for _, t in rows])
    start = davidson_fit(wins.sum(axis=0), ties.sum(axis=0)).log_strength
    together, fitted = davidson_fit_many(wins, ties, start)
    assert not fitted[-1] and fitted[:-1].all()
    for row in range(12):
        alone = davidson_fit(wins[row], ties[row])
        assert together[row] == pytest.approx(alone.log_strength, abs=1e-9)


def test_scores_a_last_bit_apart_are_ties_on_every_machine():
    """Models with the same record get strengths a bit or two apart, one way or the other by
    the CPU's vectorised path; they rank and compare as the tie they are."""
    from analysis.stats.rankings import _ranks

    tied = np.array([0.47031825981396413, 0.47031825981396425, -0.13])
    assert _ranks(tied).tolist() == [1.0, 1.0, 3.0]
    assert _ranks(tied[::-1]).tolist() == [3.0, 1.0, 1.0]
    exact = np.array([0.4703182598139641, 0.4703182598139641, -0.13])
    assert float(kendall_tau_b(tied, exact)[0]) == 1.0
    apart = np.array([0.47, 0.47 + 1e-6, -0.13])  # a real difference stays one
    assert float(kendall_tau_b(apart, exact)[0]) < 1.0
