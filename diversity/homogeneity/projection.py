"""A query's responses in two dimensions: principal component analysis of its embeddings.

Pure numpy, one pool at a time (the drill-down of the corpus page draws it). Rows are
first scaled to unit L2 norm (what the cosine analyses compare), then centred; the
projection is onto the first two right singular vectors of the centred matrix
(``numpy.linalg.svd``), so the two axes are the directions of largest variance among
the responses.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from diversity.homogeneity.similarity import unit_rows

__all__ = ["Projection", "pca_2d"]


@dataclass(frozen=True)
class Projection:
    """``coordinates``: n x 2 (the responses on the first two principal axes, input order);
    ``explained``: the share of the total variance each axis carries (0 for an axis the
    pool has no variance for)."""

    coordinates: np.ndarray
    explained: np.ndarray


def pca_2d(embeddings) -> Projection:
    """Project one pool's embeddings (n x d, dense or scipy sparse) onto 2 principal axes.

    With X the unit rows and C = X - mean(X), the SVD C = U S V^T gives the scores
    ``C V[:, :2] = U[:, :2] S[:2]`` and the explained variance shares ``S^2 / sum(S^2)``.
    Signs are fixed so that each axis's largest-magnitude score is positive (ties: the
    first), so the picture does not flip between runs or machines. Fewer than two
    distinct responses give zeros where no variance exists (a single response sits at the
    origin).
    """
    unit = unit_rows(embeddings, dtype=np.float64)
    matrix = unit.toarray() if hasattr(unit, "toarray") else np.asarray(unit)
    n = matrix.shape[0]
    coordinates = np.zeros((n, 2))
    explained = np.zeros(2)
    if n == 0:
        return Projection(coordinates, explained)
    centred = matrix - matrix.mean(axis=0)
    # the thin SVD of an n x d matrix costs O(n d min(n, d)): a pool is small
    left, singular, _ = np.linalg.svd(centred, full_matrices=False)
    axes = min(2, singular.size)
    scores = left[:, :axes] * singular[:axes]
    total = float(np.sum(singular**2))
    for axis in range(axes):
        column = scores[:, axis]
        if not np.any(np.abs(column) > 1e-12):
            continue  # no variance along this axis: leave it at 0
        if column[int(np.argmax(np.abs(column)))] < 0:
            column = -column
        coordinates[:, axis] = column
        explained[axis] = singular[axis] ** 2 / total if total > 0 else 0.0
    return Projection(coordinates, explained)
