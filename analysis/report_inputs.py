"""What a section of the analysis report is computed from: one set of items."""

from typing import NamedTuple

import numpy as np

from analysis.loading import BatchArrays, SourceScores


class ItemSet(NamedTuple):
    """One set of items of the report — the batch, or one category of it — with what the
    sections comparing models with people read of it: its arrays and score sources (both
    restricted to the set), each item's label counts and summary (``stats.item_summary``),
    and the subset masks chosen within it (``stats.batch_subsets``)."""

    arrays: BatchArrays
    sources: list[SourceScores]
    counts: np.ndarray
    summary: dict[str, np.ndarray]
    subsets: dict[str, np.ndarray]
