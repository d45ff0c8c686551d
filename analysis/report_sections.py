"""The report's sections that compare models with people — ``rankings`` (``report_rankings``)
and ``calibration`` (``report_calibration``) — over one set of items: the batch, or one
category of it (``by_category``, where they are recomputed on the group's items alone, its
subsets chosen within it). Pure."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from analysis.loading import SourceScores
from analysis.report_calibration import calibration_entry
from analysis.report_inputs import ItemSet
from analysis.report_rankings import rankings_entry


def model_sections(items: ItemSet, n_resamples: int, seed: int) -> dict:
    """``{"rankings": ..., "calibration": ...}`` over ``items``, each only when it applies:
    ``rankings`` when the items name two models, ``calibration`` when there are score
    sources."""
    sections = {
        "rankings": rankings_entry(items.arrays, items.subsets, n_resamples, seed),
        "calibration": calibration_entry(items, n_resamples, seed),
    }
    return {name: section for name, section in sections.items() if section is not None}


def restricted_source(source: SourceScores, keep: np.ndarray) -> SourceScores:
    """A source's scores and label distributions of the items where ``keep`` is true."""
    distributions = None if source.distributions is None else source.distributions[keep]
    return replace(source, scores=source.scores[keep], distributions=distributions)
