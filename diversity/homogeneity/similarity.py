"""Cosine similarity within the response pool of one query.

Every function here takes the responses to a *single* query: ``embeddings`` (n x d, any
scale; rows are L2-normalised here) and ``model_index`` (n integers naming the model of
each response). Nothing builds a similarity matrix over more than one query.

Intra- and inter-model means never need the n x n matrix either. With unit rows
``x_i`` and the per-model sums ``s_a = sum_{i in a} x_i``, the sum of cosine similarities
over all ordered pairs between models ``a`` and ``b`` is ``s_a . s_b``, so one k x d
product gives every block sum of the query (k = models present), whatever n is.

A row of zeros (an empty text under a lexical embedding, say) stays zero: its cosine
similarity to everything is taken as 0 rather than undefined.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

__all__ = [
    "ModelBlocks",
    "cosine_similarity_matrix",
    "dense_product",
    "inter_model_means",
    "inter_model_similarity",
    "intra_model_means",
    "intra_model_similarity",
    "model_blocks",
    "similarity_row_blocks",
    "typicality",
    "typicality_from_blocks",
    "unit_rows",
]


def unit_rows(embeddings, dtype=None):
    """Rows scaled to unit L2 norm: ``x_i / ||x_i||`` (zero rows stay zero).

    A scipy sparse matrix stays sparse (CSR), so a wide lexical embedding (one column per
    n-gram) is never densified; anything else becomes a dense array. The result keeps a
    floating dtype of the input (float32 stays float32, float64 stays float64) unless
    ``dtype`` is given; integers become float64.
    """
    if sp.issparse(embeddings):
        if dtype is None:
            floating = np.issubdtype(embeddings.dtype, np.floating)
            dtype = embeddings.dtype if floating else np.float64
        matrix = sp.csr_matrix(embeddings, dtype=dtype, copy=True)
        norms = np.sqrt(np.asarray(matrix.multiply(matrix).sum(axis=1)).ravel())
        scale = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
        return sp.csr_matrix(sp.diags(scale.astype(dtype)) @ matrix)
    matrix = np.asarray(embeddings)
    if matrix.ndim != 2:
        raise ValueError(f"embeddings must be 2-dimensional, got shape {matrix.shape}")
    if dtype is None:
        dtype = matrix.dtype if np.issubdtype(matrix.dtype, np.floating) else np.float64
    matrix = matrix.astype(dtype, copy=True)
    norms = np.sqrt(np.einsum("ij,ij->i", matrix, matrix))
    nonzero = norms > 0
    matrix[nonzero] /= norms[nonzero, None]
    return matrix


def dense_product(left, right) -> np.ndarray:
    """``left @ right`` as a dense array, whether the operands are dense or sparse."""
    product = left @ right
    return product.toarray() if sp.issparse(product) else np.asarray(product)


# Multiply-adds of one dense block product (rows x n x d). Kept at OpenBLAS' threading
# threshold on purpose: a pool's products are tiny, and OpenBLAS hands products above
# 2**19 multiply-adds to several threads, which on a shared 2-core machine made them about
# 20-50 times slower (measured: 13 rows x 100 x 384 took 0.26 ms of CPU, 14 rows 4.7 ms).
# Below the bound each product runs on one thread and an idle machine loses nothing
# measurable. Wide dense rows get few rows a block; sparse-looking ones are turned into
# CSR by the pipeline, and with threadpoolctl installed the pipeline holds BLAS to one
# thread anyway.
_BLOCK_MULTIPLY_ADDS = 1 << 19
# similarity values of one block (rows x n), for sparse rows: ~32 MB of float64
_BLOCK_ELEMENTS = 1 << 22


def _block_rows(unit, block_rows: int | None) -> int:
    n, d = unit.shape
    if block_rows:
        return block_rows
    if sp.issparse(unit):
        return max(1, min(n, _BLOCK_ELEMENTS // max(n, 1)))
    return max(1, min(n, _BLOCK_MULTIPLY_ADDS // max(n * d, 1)))


def similarity_row_blocks(unit, block_rows: int | None = None):
    """Yield ``(start, stop, S)`` with ``S = unit[start:stop] @ unit.T`` as a dense array,
    for consecutive blocks of rows covering all n rows (dense or CSR ``unit``)."""
    n = unit.shape[0]
    rows = _block_rows(unit, block_rows)
    transposed = unit.T.tocsr() if sp.issparse(unit) else unit.T
    for start in range(0, n, rows):
        stop = min(n, start + rows)
        yield start, stop, dense_product(unit[start:stop], transposed)


def _model_codes(model_index, n_rows: int) -> tuple[np.ndarray, np.ndarray]:
    """Present model ids (sorted) and each row's position among them."""
    codes = np.asarray(model_index)
    if codes.shape != (n_rows,):
        raise ValueError(f"model_index must have shape ({n_rows},), got {codes.shape}")
    if not np.issubdtype(codes.dtype, np.integer):
        raise ValueError("model_index must hold integers")
    return np.unique(codes, return_inverse=True)


@dataclass(frozen=True)
class ModelBlocks:
    """One query's unit embeddings with their per-model sums.

    ``unit``: the n unit rows (float64; dense, or CSR for sparse input); ``models``: the
    k model ids present (sorted); ``position[i]``: index into ``models`` of response i;
    ``counts[a]`` = c_a, responses of model a; ``model_sums[a]`` = s_a = sum over i in a
    of x_i; ``block_sums[a, b]`` = s_a . s_b = sum over i in a, j in b of x_i . x_j
    (self-pairs included when a = b); ``self_sums[a]`` = t_a = sum over i in a of
    x_i . x_i (c_a, less any zero rows).
    """

    unit: np.ndarray
    models: np.ndarray
    position: np.ndarray
    counts: np.ndarray
    model_sums: np.ndarray
    block_sums: np.ndarray
    self_sums: np.ndarray


def model_blocks(embeddings, model_index) -> ModelBlocks:
    """Normalise one query's rows, sum them per model and take all k x k block sums.

    ``block_sums = S S^T`` with ``S[a] = s_a``: a k x d by d x k product, never n x n.
    Computed in float64 so that removing the self-pairs in :func:`intra_model_means`
    loses nothing.
    """
    unit = unit_rows(embeddings, dtype=np.float64)
    models, position = _model_codes(model_index, unit.shape[0])
    n, k = unit.shape[0], models.size
    counts = np.bincount(position, minlength=k)
    if sp.issparse(unit):
        membership = sp.csr_matrix((np.ones(n), (position, np.arange(n))), shape=(k, n))
        sums = sp.csr_matrix(membership @ unit)
        squares = np.asarray(unit.multiply(unit).sum(axis=1)).ravel()
    else:
        # rows grouped by model, then one running sum per group (no k x n product)
        by_model = np.argsort(position, kind="stable")
        starts = np.concatenate([[0], np.cumsum(counts)[:-1]])
        sums = np.add.reduceat(unit[by_model], starts, axis=0)
        squares = np.einsum("ij,ij->i", unit, unit)
    self_sums = np.bincount(position, weights=squares, minlength=k)
    block_sums = dense_product(sums, sums.T)
    return ModelBlocks(unit, models, position, counts, sums, block_sums, self_sums)


def intra_model_means(blocks: ModelBlocks) -> tuple[np.ndarray, np.ndarray]:
    """Mean pairwise similarity among each model's own responses to the query.

    ``r_a = (B_aa - t_a) / (c_a (c_a - 1))``: the mean of ``x_i . x_j`` over the
    ``c_a (c_a - 1) / 2`` unordered pairs i < j of model a (B_aa counts every unordered pair
    twice plus the c_a self-pairs, whose sum is t_a). Models with fewer than two responses
    have no pair and are left out. Returns (model ids, means).
    """
    keep = blocks.counts >= 2
    counts = blocks.counts[keep].astype(np.float64)
    diagonal = np.diagonal(blocks.block_sums)[keep]
    return blocks.models[keep], (diagonal - blocks.self_sums[keep]) / (counts * (counts - 1))


def inter_model_means(blocks: ModelBlocks) -> np.ndarray:
    """Mean similarity between the responses of two models: ``B_ab / (c_a c_b)``.

    Off the diagonal this is the mean over all c_a * c_b cross pairs of samples. The
    diagonal of this matrix includes self-pairs and is not a statistic: callers replace it
    with :func:`intra_model_means`.
    """
    counts = blocks.counts.astype(np.float64)
    return blocks.block_sums / np.outer(counts, counts)


def intra_model_similarity(embeddings, model_index) -> dict[int, float]:
    """Per model of this query, the mean similarity among its own samples (pairs i < j).

    A model with fewer than two responses to the query is absent from the result.
    """
    models, means = intra_model_means(model_blocks(embeddings, model_index))
    return {int(m): float(v) for m, v in zip(models, means, strict=True)}


def inter_model_similarity(embeddings, model_index) -> dict[tuple[int, int], float]:
    """Per unordered pair of distinct models (a < b) of this query, the mean cross-pair
    similarity ``(1 / (c_a c_b)) sum_{i in a, j in b} x_i . x_j``."""
    blocks = model_blocks(embeddings, model_index)
    matrix = inter_model_means(blocks)
    upper_a, upper_b = np.triu_indices(blocks.models.size, k=1)
    return {
        (int(blocks.models[a]), int(blocks.models[b])): float(matrix[a, b])
        for a, b in zip(upper_a, upper_b, strict=True)
    }


def typicality_from_blocks(blocks: ModelBlocks) -> np.ndarray:
    """:func:`typicality` from already computed :class:`ModelBlocks`."""
    own = blocks.position
    n = blocks.unit.shape[0]
    others = n - blocks.counts[own]
    if sp.issparse(blocks.unit):
        # x_i . s_a for every model a: the dot with all the others is the row total less
        # the own-model entry
        per_model = dense_product(blocks.unit, blocks.model_sums.T)
        dots = per_model.sum(axis=1) - per_model[np.arange(n), own]
    else:
        total = blocks.model_sums.sum(axis=0)
        dots = np.einsum("ij,ij->i", blocks.unit, total - blocks.model_sums[own])
    return np.where(others > 0, dots / np.maximum(others, 1), np.nan)


def typicality(embeddings, model_index) -> np.ndarray:
    """Typicality of each response: its mean similarity to the OTHER models' responses.

    ``tau_i = (1 / (n - c_m(i))) sum_{j : m(j) != m(i)} x_i . x_j
    = x_i . (T - s_m(i)) / (n - c_m(i))`` with T the sum of all unit rows and s_m the sum
    over model m. NaN for a response when no other model answered the query. Float64, in
    input order.
    """
    return typicality_from_blocks(model_blocks(embeddings, model_index))


def cosine_similarity_matrix(embeddings, block_rows: int | None = None) -> np.ndarray:
    """The n x n cosine similarity matrix of one query's responses, built block by block
    of rows (see :func:`similarity_row_blocks`)."""
    unit = unit_rows(embeddings)
    n = unit.shape[0]
    out = np.empty((n, n), dtype=unit.dtype)
    for start, stop, block in similarity_row_blocks(unit, block_rows):
        out[start:stop] = block
    return out
