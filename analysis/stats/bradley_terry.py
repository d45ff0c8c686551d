"""The Bradley–Terry model with Davidson's ties, fitted by maximum likelihood.

Bradley & Terry 1952; Davidson 1970, "On extending the Bradley–Terry model to accommodate
ties in paired comparison experiments", JASA 65. With strengths ``pi_i = exp(theta_i)`` and a
tie parameter ``nu >= 0``, a comparison of ``i`` and ``j`` ends

    P(i wins) = pi_i / D,   P(j wins) = pi_j / D,   P(tie) = nu sqrt(pi_i pi_j) / D,
    D = pi_i + pi_j + nu sqrt(pi_i pi_j).

``log D`` is the log-partition function of the three outcomes with sufficient statistics
``(1, 0, 0)``, ``(0, 1, 0)`` and ``(1/2, 1/2, 1)`` in ``(theta_i, theta_j, log nu)``, so the
log-likelihood is concave and its negative Hessian is the sum over comparisons of the
outcomes' covariance. :func:`davidson_fit` maximises it by Newton's method with step halving
until no parameter moves by more than ``1e-10``; identifiability: the log-strengths sum to zero
(natural logs). Without any tie ``nu`` is 0 and the model is plain Bradley–Terry.
:func:`davidson_fit_many` runs the same Newton iterations on many tallies of the same
models at once (the resamples of a bootstrap).

Pure numpy / scipy; no Django.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy import sparse
from scipy.sparse.csgraph import connected_components

__all__ = ["DavidsonFit", "davidson_fit", "davidson_fit_many", "win_probabilities"]

TOLERANCE = 1e-10
MAX_ITERATIONS = 200
# With ties, a strongly connected graph is not always enough: B beating A every time while
# each ties C once lets B/A and nu grow together and every outcome's probability tend to 1.
# Newton's information then vanishes (a singular matrix): the fit has no finite maximum.
NO_FINITE_MAXIMUM = "no finite maximum: the strengths and the tie parameter grow without bound"


class DavidsonFit(NamedTuple):
    """A maximum-likelihood fit; ``log_strength`` is ``None`` (with a reason) when the data
    do not determine it."""

    log_strength: np.ndarray | None  # (M,) natural logs summing to zero
    tie_parameter: float | None  # nu; 0 when no comparison was a tie
    iterations: int
    reason: str | None = None


def davidson_fit(
    wins: np.ndarray,
    ties: np.ndarray | None = None,
    *,
    start: np.ndarray | None = None,
    tolerance: float = TOLERANCE,
    max_iterations: int = MAX_ITERATIONS,
) -> DavidsonFit:
    """Maximum-likelihood Bradley–Terry–Davidson strengths (see the module docstring).

    ``wins[i, j]``: comparisons ``i`` won against ``j``; ``ties[i, j] = ties[j, i]``: ties
    between them (``None``: none, plain Bradley–Terry). Only models in some comparison are
    fitted; the others get NaN. The maximum exists when every model that was compared can be
    reached from every other by "won or tied against" steps (the comparison graph is strongly
    connected, Zermelo 1929 / Ford 1957); otherwise the fit is ``None`` with the reason, as
    when every comparison was a tie (``nu`` would be infinite). ``start``: log-strengths to
    start Newton from (a bootstrap starts from the full fit).
    """
    wins = np.asarray(wins, dtype=np.float64)
    n_models = wins.shape[0]
    ties = np.zeros_like(wins) if ties is None else np.asarray(ties, dtype=np.float64)
    together = wins + wins.T + ties
    compared = together.sum(axis=1) > 0
    log_strength = np.full(n_models, np.nan)
    if compared.sum() < 2:
        return DavidsonFit(None, None, 0, "fewer than two models were compared")
    index = np.flatnonzero(compared)
    w, t = wins[np.ix_(index, index)], ties[np.ix_(index, index)]
    m = index.size
    reach = (w + t) > 0  # i -> j: i won against or tied with j
    n_parts, _ = connected_components(sparse.csr_matrix(reach), connection="strong")
    if n_parts > 1:
        return DavidsonFit(
            None, None, 0, "not identifiable: some models never lose (or tie) against the rest"
        )
    low, high = np.nonzero(np.triu(w + w.T + t, 1) > 0)
    w_lh, w_hl, t_lh = w[low, high], w[high, low], t[low, high]
    n_pair = w_lh + w_hl + t_lh
    total_ties = t_lh.sum()
    if total_ties >= n_pair.sum():
        return DavidsonFit(None, None, 0, "every comparison was a tie")
    with_ties = total_ties > 0

    theta = np.zeros(m) if start is None else np.nan_to_num(np.asarray(start)[index])
    theta = theta - theta.mean()
    eta = np.log(max(total_ties, 1e-300) / (n_pair.sum() - total_ties)) if with_ties else 0.0
    params = np.append(theta, eta) if with_ties else theta
    size = params.size

    def log_likelihood(x: np.ndarray) -> float:
        a, b = x[low], x[high]
        if not with_ties:
            return float(w_lh @ a + w_hl @ b - n_pair @ np.logaddexp(a, b))
        c = x[m] + (a + b) / 2
        log_d = np.logaddexp(np.logaddexp(a, b), c)
        return float(w_lh @ a + w_hl @ b + t_lh @ c - n_pair @ log_d)

    current = log_likelihood(params)
    iterations = 0
    # F + u u^T with u = (1, ..., 1, 0) is invertible and, as the gradient is orthogonal to
    # u (shifting every theta changes nothing), its solution keeps sum(theta) fixed.
    shift = np.zeros((size, size))
    shift[:m, :m] = 1.0
    moved = np.inf
    while moved >= tolerance:
        if iterations == max_iterations:
            return DavidsonFit(None, None, iterations, "did not converge")
        iterations += 1
        gradient, information = _gradient_information(
            params, low, high, w_lh, w_hl, t_lh, n_pair, m, with_ties
        )
        try:
            step = np.linalg.solve(information + shift, gradient)
        except np.linalg.LinAlgError:
            return DavidsonFit(None, None, iterations, NO_FINITE_MAXIMUM)
        scale = 1.0
        while True:
            trial = params + scale * step
            value = log_likelihood(trial)
            if value >= current - 1e-12 * abs(current) or scale < 1e-8:
                break
            scale /= 2
        moved = np.max(np.abs(scale * step))
        params, current = trial, value
        params[:m] -= params[:m].mean()
    log_strength[index] = params[:m]
    nu = float(np.exp(params[m])) if with_ties else 0.0
    return DavidsonFit(log_strength, nu, iterations)


def _outcome_probabilities(a: np.ndarray, b: np.ndarray, tie: np.ndarray | float | None):
    """P(A wins), P(B wins), P(tie) of pairs with strengths ``a`` and ``b`` (log scale):
    Bradley–Terry without ``tie``; with it (Davidson's log tie parameter, a scalar or a
    column broadcast over rows of pairs), the tie's weight is ``exp(tie + (a + b) / 2)``.
    The exponents are taken relative to the largest, so none overflows."""
    if tie is None:
        p_a = 1.0 / (1.0 + np.exp(b - a))
        return p_a, 1.0 - p_a, np.zeros_like(p_a)
    c = tie + (a + b) / 2
    top = np.maximum(np.maximum(a, b), c)
    ea, eb, ec = np.exp(a - top), np.exp(b - top), np.exp(c - top)
    d = ea + eb + ec
    return ea / d, eb / d, ec / d


def _gradient_information(
    params: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    w_lh: np.ndarray,
    w_hl: np.ndarray,
    t_lh: np.ndarray,
    n_pair: np.ndarray,
    m: int,
    with_ties: bool,
) -> tuple[np.ndarray, np.ndarray]:
    """Gradient of the log-likelihood and the observed information (= expected here)."""
    p_a, p_b, p_t = _outcome_probabilities(
        params[low], params[high], params[m] if with_ties else None
    )
    mean_a = p_a + p_t / 2
    mean_b = p_b + p_t / 2
    size = m + 1 if with_ties else m
    gradient = np.bincount(low, w_lh + t_lh / 2 - n_pair * mean_a, minlength=size)
    gradient += np.bincount(high, w_hl + t_lh / 2 - n_pair * mean_b, minlength=size)
    # Covariance of the sufficient statistics (1,0,0), (0,1,0), (1/2,1/2,1) per pair.
    c_aa = n_pair * (p_a + p_t / 4 - mean_a**2)
    c_bb = n_pair * (p_b + p_t / 4 - mean_b**2)
    c_ab = n_pair * (p_t / 4 - mean_a * mean_b)
    rows = [low, high, low, high]
    cols = [low, high, high, low]
    values = [c_aa, c_bb, c_ab, c_ab]
    if with_ties:
        gradient[m] = t_lh.sum() - n_pair @ p_t
        c_at = n_pair * (p_t / 2 - mean_a * p_t)
        c_bt = n_pair * (p_t / 2 - mean_b * p_t)
        tie_index = np.full(low.size, m)
        rows += [low, tie_index, high, tie_index, tie_index[:1]]
        cols += [tie_index, low, tie_index, high, tie_index[:1]]
        values += [c_at, c_at, c_bt, c_bt, np.array([n_pair @ (p_t - p_t**2)])]
    flat = np.concatenate(rows) * size + np.concatenate(cols)
    information = np.bincount(flat, np.concatenate(values), minlength=size * size)
    return gradient, information.reshape(size, size)


def win_probabilities(log_strength: np.ndarray, tie_parameter: float) -> np.ndarray:
    """``P[i, j]``: the probability that ``i`` beats ``j`` in one comparison (Davidson);
    the tie probability is ``1 - P[i, j] - P[j, i]``. The diagonal is NaN."""
    a = log_strength[:, None]
    b = log_strength[None, :]
    top = np.maximum(a, b)
    d = np.exp(a - top) + np.exp(b - top) + tie_parameter * np.exp((a + b) / 2 - top)
    probability = np.exp(a - top) / d
    np.fill_diagonal(probability, np.nan)
    return probability


def _newton_steps(matrices: np.ndarray, gradients: np.ndarray) -> np.ndarray:
    """Each row's Newton step ``matrices[r]^-1 gradients[r]``; NaN for a row whose matrix
    is singular (its strengths run off without bound: the information vanishes)."""
    try:
        return np.linalg.solve(matrices, gradients[:, :, None])[:, :, 0]
    except np.linalg.LinAlgError:
        steps = np.full(gradients.shape, np.nan)
        for row in range(matrices.shape[0]):
            try:
                steps[row] = np.linalg.solve(matrices[row], gradients[row])
            except np.linalg.LinAlgError:
                continue
        return steps


def _strongly_connected(reach: np.ndarray) -> np.ndarray:
    """Per ``(B, m, m)`` reachability matrix, whether every node reaches every other
    (transitive closure by repeated squaring of boolean matrices)."""
    m = reach.shape[-1]
    closure = reach | np.eye(m, dtype=bool)
    steps = 1
    while steps < m:
        closure = np.einsum("bij,bjk->bik", closure.astype(np.int32), closure.astype(np.int32)) > 0
        steps *= 2
    return closure.all(axis=(1, 2))


def davidson_fit_many(
    wins: np.ndarray,
    ties: np.ndarray,
    start: np.ndarray,
    *,
    tolerance: float = TOLERANCE,
    max_iterations: int = MAX_ITERATIONS,
) -> tuple[np.ndarray, np.ndarray]:
    """:func:`davidson_fit` of many tallies of the same models at once.

    ``wins`` / ``ties``: ``(B, M, M)``; ``start``: the log-strengths to start every row from
    (a full fit: NaN for models it did not fit, which are not fitted here either). Returns
    ``(log_strength (B, M), fitted (B,))``: the rows in which every model of ``start`` was
    compared, the comparison graph is strongly connected, some but not all comparisons are
    ties (or none is, when ``start`` came from a fit without ties: pass ``ties`` of zeros)
    and Newton converged carry the maximum-likelihood fit (the same iterations as
    :func:`davidson_fit`, each row stopping on its own); ``fitted`` is False for the others,
    which the caller fits one by one.
    """
    index = np.flatnonzero(np.isfinite(start))
    m, rows = index.size, wins.shape[0]
    out = np.full((rows, wins.shape[1]), np.nan)
    w = wins[:, index][:, :, index]
    t = ties[:, index][:, :, index]
    low, high = np.nonzero(np.triu(np.ones((m, m), dtype=bool), 1))
    w_lh, w_hl, t_lh = w[:, low, high], w[:, high, low], t[:, low, high]
    n_pair = w_lh + w_hl + t_lh
    total, total_ties = n_pair.sum(axis=1), t_lh.sum(axis=1)
    with_ties = bool(total_ties.any())
    compared = (w + w.transpose(0, 2, 1) + t).sum(axis=2) > 0
    ok = compared.all(axis=1) & _strongly_connected((w + t) > 0)
    ok &= (total_ties > 0) & (total_ties < total) if with_ties else total_ties == 0
    size = m + 1 if with_ties else m
    params = np.zeros((rows, size))
    params[:, :m] = start[index] - start[index].mean()
    if with_ties:
        params[:, m] = np.log(np.maximum(total_ties, 1e-300) / np.maximum(total - total_ties, 1))
    low_hot = np.eye(size)[low]  # (Q, P) one-hot of each pair's models
    high_hot = np.eye(size)[high]
    tie_hot = np.zeros(size)
    if with_ties:
        tie_hot[m] = 1.0
    diagonal = np.arange(m)
    shift = np.zeros((size, size))
    shift[:m, :m] = 1.0

    def log_likelihood(x: np.ndarray, rows_now: np.ndarray) -> np.ndarray:
        a, b = x[:, low], x[:, high]
        wl, wh, n = w_lh[rows_now], w_hl[rows_now], n_pair[rows_now]
        if not with_ties:
            return (wl * a + wh * b - n * np.logaddexp(a, b)).sum(axis=1)
        c = x[:, m : m + 1] + (a + b) / 2
        log_d = np.logaddexp(np.logaddexp(a, b), c)
        return (wl * a + wh * b + t_lh[rows_now] * c - n * log_d).sum(axis=1)

    active = ok.copy()
    converged = np.zeros(rows, dtype=bool)
    current = log_likelihood(params, np.arange(rows))
    for _ in range(max_iterations):
        if not active.any():
            break
        rows_now = np.flatnonzero(active)
        x = params[rows_now]
        n = n_pair[rows_now]
        p_a, p_b, p_t = _outcome_probabilities(
            x[:, low], x[:, high], x[:, m : m + 1] if with_ties else None
        )
        mean_a, mean_b = p_a + p_t / 2, p_b + p_t / 2
        t_now = t_lh[rows_now]
        gradient = (w_lh[rows_now] + t_now / 2 - n * mean_a) @ low_hot
        gradient += (w_hl[rows_now] + t_now / 2 - n * mean_b) @ high_hot
        gradient += (t_now - n * p_t).sum(axis=1, keepdims=True) * tie_hot
        c_aa = n * (p_a + p_t / 4 - mean_a**2)
        c_bb = n * (p_b + p_t / 4 - mean_b**2)
        c_ab = n * (p_t / 4 - mean_a * mean_b)
        # each pair (low, high) is one off-diagonal cell and adds to two diagonal ones
        information = np.zeros((rows_now.size, size, size))
        information[:, diagonal, diagonal] = c_aa @ low_hot[:, :m] + c_bb @ high_hot[:, :m]
        information[:, low, high] = c_ab
        information[:, high, low] = c_ab
        if with_ties:
            c_at = n * (p_t / 2 - mean_a * p_t)
            c_bt = n * (p_t / 2 - mean_b * p_t)
            column = c_at @ low_hot + c_bt @ high_hot  # (B, P): covariance with log nu
            information[:, :, m] += column
            information[:, m, :] += column
            information[:, m, m] = (n * (p_t - p_t**2)).sum(axis=1)
        step = _newton_steps(information + shift, gradient)
        stuck = ~np.isfinite(step).all(axis=1)  # no finite maximum: never fitted
        if stuck.any():
            active[rows_now[stuck]] = False
            keep = ~stuck
            rows_now, x, step = rows_now[keep], x[keep], step[keep]
            if not rows_now.size:
                continue
        scale = np.ones(rows_now.size)
        before = current[rows_now]
        for _halving in range(27):  # down to 2**-26 < 1e-8, as davidson_fit
            trial = x + scale[:, None] * step
            value = log_likelihood(trial, rows_now)
            worse = value < before - 1e-12 * np.abs(before)
            if not worse.any():
                break
            scale = np.where(worse, scale / 2, scale)
        moved = np.max(np.abs(scale[:, None] * step), axis=1)
        trial[:, :m] -= trial[:, :m].mean(axis=1, keepdims=True)
        params[rows_now] = trial
        current[rows_now] = value
        done = moved < tolerance
        converged[rows_now[done]] = True
        active[rows_now[done]] = False
    fitted = ok & converged
    out[np.ix_(np.flatnonzero(fitted), index)] = params[fitted, :m]
    return out, fitted
