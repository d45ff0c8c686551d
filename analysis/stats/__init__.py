"""Statistics of a batch's counted labels and model scores (numpy / scipy only, no Django).

Definitions follow ``docs/ANALYSIS.md`` (the Infinity-Chat study, Jiang et al., "Artificial
Hivemind", NeurIPS 2025). The database-facing code loads a batch once and hands over arrays;
everything here is vectorised over all items, never a Python loop or a scipy call per item
or per bootstrap resample. ``analysis.reports`` turns the results into the JSON report.

Modules
-------
:mod:`~analysis.stats.per_item`
    count matrix, entropy, mean / std, pairwise agreement and other per-item disagreement.
:mod:`~analysis.stats.subsets`
    the subset families and their rules (Tukey fences, top entropy, most ties, least
    agreement).
:mod:`~analysis.stats.correlation`
    Spearman and Pearson with p-values, mid-ranks, the correlation result types.
:mod:`~analysis.stats.grouped_correlation`
    Spearman of many groups of pairs at once (each annotator against the crowd).
:mod:`~analysis.stats.bootstrap`
    seeded bootstrap intervals of many sources on many subsets at once.
:mod:`~analysis.stats.bootstrap_kernels`
    the bootstrap's vectorised kernels: a chunk of resamples of every source at once, or of
    one source.
:mod:`~analysis.stats.agreement`
    Krippendorff's alpha, the batch agreement summary, annotator-crowd agreement.
:mod:`~analysis.stats.bradley_terry`
    the Bradley–Terry model with Davidson's ties: maximum-likelihood fits, one or many.
:mod:`~analysis.stats.rankings`
    strengths and mean ratings per model with a cluster bootstrap over annotators, ranks
    and Kendall's tau between rankings.
:mod:`~analysis.stats.competence`
    Dawid–Skene and MACE annotator competence (EM).
:mod:`~analysis.stats.calibration`
    a source's label distributions against the human ones: JSD, EMD, LeWiDi's soft
    measures, ECE; the spread tracking of scalar scores.

The percentile interval and the seeded resample draws of every interval are
:func:`~analysis.stats.bootstrap.percentile_interval` and
:func:`~analysis.stats.bootstrap.resample_counts`.

Per-item arrays give ``NaN`` for items without labels (the report leaves those items out);
functions that return a single number return ``None`` (with a reason where there is one)
instead of ``NaN`` when the number is undefined.
"""

# each module's public names, under the names it exports
from analysis.stats import agreement, consistency, correlation, per_item, subsets
from analysis.stats.agreement import *  # noqa: F403
from analysis.stats.bootstrap import correlate_sources_subsets
from analysis.stats.consistency import *  # noqa: F403
from analysis.stats.correlation import *  # noqa: F403
from analysis.stats.per_item import *  # noqa: F403
from analysis.stats.subsets import *  # noqa: F403

__all__ = [
    *agreement.__all__,
    *consistency.__all__,
    *correlation.__all__,
    "correlate_sources_subsets",
    *per_item.__all__,
    *subsets.__all__,
]
