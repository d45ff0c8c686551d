"""Top-N unique models: how many different models a response's nearest neighbours come from.

For one query with n responses, response i's neighbours are the other n - 1 responses
ordered by decreasing cosine similarity to it (equivalently increasing cosine distance);
i itself is never its own neighbour. ``U_i(N)`` is the number of distinct models among
the first N neighbours, and the query's curve is ``U(N) = (1/n) sum_i U_i(N)``.

Only N <= n - 1 is defined for a query (a response has no more neighbours than that);
the curve holds NaN beyond. A pool of 1 response has no defined point at all.

Ties: similarities are rounded to a grid of ``SIMILARITY_RESOLUTION`` (1e-9) before ranking
so that floating-point noise in the last bits of a matrix product cannot reorder equal
similarities; equal rounded similarities are ordered by lower response index first.
"""

from __future__ import annotations

import numpy as np

from diversity.homogeneity.similarity import similarity_row_blocks, unit_rows

__all__ = [
    "DEFAULT_MAX_N",
    "SIMILARITY_RESOLUTION",
    "distinct_model_counts",
    "nearest_neighbours",
    "unique_models_curve",
]

DEFAULT_MAX_N = 50
SIMILARITY_RESOLUTION = 1e-9


def _neighbour_order(similarity: np.ndarray, start: int, depth: int) -> np.ndarray:
    """First ``depth`` neighbours of the rows of a similarity block starting at row
    ``start``, nearest first (see module doc)."""
    n = similarity.shape[1]
    # one integer key per pair, unique within a row: the rounded similarity, negated so
    # that ascending order puts the most similar first, then the neighbour's index; a
    # plain (unstable) sort then gives the documented order
    keys = -np.rint(similarity / SIMILARITY_RESOLUTION).astype(np.int64)
    keys *= n
    keys += np.arange(n)
    rows = np.arange(similarity.shape[0])
    keys[rows, rows + start] = np.iinfo(np.int64).max  # a response is not its own neighbour
    if depth < n - 1:
        keys_order = np.argpartition(keys, depth, axis=1)[:, :depth]
        nearest = np.take_along_axis(keys, keys_order, axis=1)
        return np.take_along_axis(keys_order, np.argsort(nearest, axis=1), axis=1)
    return np.argsort(keys, axis=1)[:, :depth]


def nearest_neighbours(embeddings, n_neighbours: int, block_rows: int | None = None):
    """Indices of each response's ``min(n_neighbours, n - 1)`` nearest neighbours.

    Row i lists other responses by decreasing cosine similarity to i (ties by lower index).
    Shape (n, min(n_neighbours, n - 1)).
    """
    unit = unit_rows(embeddings, dtype=np.float64)
    n = unit.shape[0]
    depth = max(0, min(n_neighbours, n - 1))
    out = np.empty((n, depth), dtype=np.int64)
    if depth == 0:
        return out
    for start, stop, similarity in similarity_row_blocks(unit, block_rows):
        out[start:stop] = _neighbour_order(similarity, start, depth)
    return out


def _first_appearances(neighbour_models: np.ndarray, n_models: int) -> np.ndarray:
    """Flat positions (row * depth + column) where a model first appears in its row."""
    n_rows, depth = neighbour_models.shape
    labels = (np.arange(n_rows)[:, None] * n_models + neighbour_models).ravel()
    # return_index gives the first position of each label in row-major order
    return np.unique(labels, return_index=True)[1]


def distinct_model_counts(neighbour_models: np.ndarray, n_models: int) -> np.ndarray:
    """``counts[i, N - 1]`` = number of distinct values in ``neighbour_models[i, :N]``.

    ``neighbour_models`` holds model positions in 0..n_models-1, nearest neighbour first.
    A model adds one to the count from the column where it first appears in the row on.
    """
    neighbour_models = np.asarray(neighbour_models, dtype=np.int64)
    n_rows, depth = neighbour_models.shape
    if depth == 0:
        return np.zeros((n_rows, 0), dtype=np.int64)
    first = _first_appearances(neighbour_models, n_models)
    new = np.bincount(first, minlength=n_rows * depth).reshape(n_rows, depth)
    return np.cumsum(new, axis=1)


def unique_models_curve(
    embeddings,
    model_index,
    max_n: int = DEFAULT_MAX_N,
    block_rows: int | None = None,
    assume_unit: bool = False,
) -> np.ndarray:
    """The query's top-N unique-models curve ``U(N)`` for N = 1..max_n (float64).

    ``U(N) = (1/n) sum_i |{ m(j) : j among the N nearest neighbours of i }|`` for
    N <= n - 1, NaN for larger N. Bounded by min(N, models in the query) and
    non-decreasing in N. ``assume_unit`` skips the normalisation for rows that are
    already unit float64, dense or CSR (such as ``ModelBlocks.unit``).
    """
    unit = embeddings if assume_unit else unit_rows(embeddings, dtype=np.float64)
    n = unit.shape[0]
    codes = np.asarray(model_index)
    if codes.shape != (n,):
        raise ValueError(f"model_index must have shape ({n},), got {codes.shape}")
    curve = np.full(max_n, np.nan)
    depth = max(0, min(max_n, n - 1))
    if depth == 0:
        return curve
    _, position = np.unique(codes, return_inverse=True)
    n_models = int(position.max()) + 1
    new_per_column = np.zeros(depth, dtype=np.int64)
    for start, _, similarity in similarity_row_blocks(unit, block_rows):
        order = _neighbour_order(similarity, start, depth)
        first = _first_appearances(position[order], n_models)
        # sum over rows of the per-row counts = running total of first appearances by column
        new_per_column += np.bincount(first % depth, minlength=depth)
    curve[:depth] = np.cumsum(new_per_column) / n
    return curve
