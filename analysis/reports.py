"""The analysis report of ANALYSIS.md, built from arrays by ``analysis.stats``.

Pure: takes ``BatchArrays`` and ``SourceScores`` (see ``analysis.loading``), returns a
JSON-ready dict in which every float is finite or ``null`` — never NaN or Infinity. The
report's shape is ``analysis.report_shape`` (a ``TypedDict`` per entry); the statistics
layer only hands over arrays and result tuples.

Choices the spec leaves open:
* ``n_items`` counts items with at least one counted label (the ``full`` subset); items
  without labels have no mean and are left out of ``items`` too.
* ``std`` is the population standard deviation (ddof = 0) of an item's labels.
* ``by_kind`` averages, per kind and subset, the Spearman ρ and Pearson r of the sources
  whose correlation is defined there; ``n_sources`` says how many that was.
* ``by_category`` recomputes the batch-level figures over each category's items (and each
  sub-category's) as if they were a batch of their own: the subsets are chosen within the
  category, the bootstrap uses the same seed, and an entry with fewer than
  ``MIN_CATEGORY_ITEMS`` labelled items is marked ``small``. The model rankings and the
  calibration are recomputed there too (annotator competence is not: it is a property of
  the annotator over all of their labels).

Sections with a module of their own: ``report_annotators`` (per annotator),
``report_validity``, ``report_rankings`` and ``report_calibration`` (both through
``report_sections``, for the batch and each category), ``report_competence``.
"""

import copy
import math
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np

from analysis import stats
from analysis.loading import BatchArrays, SourceScores
from analysis.report_annotators import AnnotatorEntry, annotator_entries
from analysis.report_competence import competence_entry
from analysis.report_inputs import ItemSet
from analysis.report_sections import model_sections, restricted_source
from analysis.report_shape import (
    Agreement,
    ByKindEntry,
    CategoryEntry,
    CorrelationEntry,
    CorrelationFigures,
    ItemEntry,
    Report,
)
from analysis.report_validity import Validity, validity_entry
from analysis.stats.correlation import EXACT_P_MAX_PAIRS, MIN_P_VALUE_PAIRS

SOURCE_KINDS = ("lm", "reward_model", "judge", "other")


def build_report(
    arrays: BatchArrays,
    sources: list[SourceScores],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    group_by: str | None = None,
    progress: Callable[[int, int], None] | None = None,
) -> Report:
    # Annotator competence (the labels alone) and the model rankings and calibration (the
    # items' figures) are computed in a second thread while this one computes the figures
    # that run on one core, before the bootstrap takes both cores. A failure here is raised
    # at once, without waiting for that thread's work, which is then of no use.
    beside = ThreadPoolExecutor(max_workers=1)
    settings = {"n_resamples": n_resamples, "seed": seed, "group_by": group_by}
    try:
        return _report(arrays, sources, beside, settings, progress)
    finally:
        beside.shutdown(wait=False, cancel_futures=True)


def _report(
    arrays: BatchArrays,
    sources: list[SourceScores],
    beside: ThreadPoolExecutor,
    settings: dict,
    progress: Callable[[int, int], None] | None,
) -> Report:
    """``build_report`` with its second thread (``beside``) and its ``settings``."""
    n_resamples, seed, group_by = settings["n_resamples"], settings["seed"], settings["group_by"]
    groups = category_groups(arrays)
    steps = len(sources) + 2 + len(groups)
    _tell(progress, 1, steps)
    competence_later = beside.submit(competence_entry, arrays)
    items = _item_figures(arrays)
    counts, summary, _, subsets = items
    sections_later = beside.submit(
        model_sections, ItemSet(arrays, sources, counts, summary, subsets), n_resamples, seed
    )

    # Progress counts the distinct item sets (subsets x score coverage) as they finish.
    def tell_sets(done: int, total: int) -> None:
        nonlocal steps
        steps = total + 2 + len(groups)
        _tell(progress, 1 + done, steps)

    figures = _figures(arrays, sources, n_resamples, seed, group_by, tell_sets, items)
    labelled = figures.subsets["full"]
    # A group with the same items as the batch, or as an earlier group (a category with a
    # single sub-category), has the same figures: they are computed once per item set.
    whole_batch = _items_key(np.ones(arrays.n_items, dtype=bool))
    figures_of_items = {whole_batch: figures}
    # A group's model rankings and calibration, likewise; a group of all the batch's items
    # (a batch of one category) takes the batch's, which the other thread computes.
    sections_of_items: dict = {whole_batch: sections_later}
    by_category: list[CategoryEntry] = []
    taking_the_batchs: list[CategoryEntry] = []  # filled when the other thread is done
    for number, (category, subcategory, keep) in enumerate(groups, start=1):
        key = _items_key(keep)
        if key not in sections_of_items:
            restricted = arrays.restricted_to(keep)
            scores = [restricted_source(source, keep) for source in sources]
            if key not in figures_of_items:
                figures_of_items[key] = _figures(
                    restricted, scores, n_resamples, seed, group_by, None
                )
            group = figures_of_items[key]
            sections_of_items[key] = model_sections(
                ItemSet(restricted, scores, group.counts, group.summary, group.subsets),
                n_resamples,
                seed,
            )
        entry = _category_entry(category, subcategory, figures_of_items[key])
        sections = sections_of_items[key]
        if isinstance(sections, Future):
            taking_the_batchs.append(entry)  # meanwhile, the other groups go on
        else:
            entry.update(sections)
        by_category.append(entry)
        _tell(progress, steps - len(groups) - 1 + number, steps)

    report: Report = {
        "batch": arrays.slug,
        "kind": arrays.kind,
        "n_items": int(labelled.sum()),
        "n_labels": int(arrays.value.size),
        "n_annotators": arrays.n_annotators,
        **completeness(arrays),
        "settings": {
            "bootstrap_resamples": n_resamples,
            "seed": seed,
            "min_p_value_n": MIN_P_VALUE_PAIRS,
            "exact_p_max_n": EXACT_P_MAX_PAIRS,
        },
        "items": _item_entries(arrays, figures.counts, figures.summary, figures.pairwise, labelled),
        "subsets": {
            name: [arrays.item_ids[i] for i in np.flatnonzero(mask)]
            for name, mask in figures.subsets.items()
        },
        "correlations": figures.correlations,
        "by_kind": _by_kind(figures.correlations, list(figures.subsets)),
        "agreement": figures.agreement,
        "annotators": figures.annotators,
        "sources": [
            {
                "source": source.name,
                "kind": source.kind,
                "n_items_scored": int(np.isfinite(source.scores[labelled]).sum()),
            }
            for source in sources
        ],
        "validity": figures.validity,
        "category_min_items": MIN_CATEGORY_ITEMS,
        "by_category": by_category,
    }
    sections = sections_later.result()
    for entry in taking_the_batchs:  # a copy: the report's own stay apart from a category's
        entry.update(copy.deepcopy(sections))
    if "rankings" in sections:
        report["rankings"] = sections["rankings"]
    annotator_competence = competence_later.result()
    if annotator_competence is not None:
        report["competence"] = annotator_competence
    if "calibration" in sections:
        report["calibration"] = sections["calibration"]
    _tell(progress, steps, steps)
    return report


def completeness(arrays: BatchArrays) -> dict:
    """How many of the batch's regular items had their N counted labels (``complete``: all
    of them). Attention checks are not among the items, so they never count here."""
    total = arrays.n_items
    if arrays.targets.size != total:
        return {
            "complete": None,
            "items_complete": None,
            "items_total": total,
            "labels_per_item": None,
        }
    counted = np.bincount(arrays.item_index, minlength=total)
    done = int(np.count_nonzero(counted >= arrays.targets))
    return {
        "complete": done == total,
        "items_complete": done,
        "items_total": total,
        "labels_per_item": int(arrays.targets.max()) if total else None,
    }


@dataclass
class _Figures:
    """The batch-level figures of the report over one set of items (the batch, or one
    category of it)."""

    counts: np.ndarray
    summary: dict[str, np.ndarray]
    pairwise: dict[str, np.ndarray] | None
    subsets: dict[str, np.ndarray]
    correlations: list[CorrelationEntry]
    agreement: Agreement
    annotators: list[AnnotatorEntry]
    validity: Validity
    arrays: BatchArrays


def _item_figures(arrays: BatchArrays) -> tuple:
    """Each item's label counts, their summary, the pairwise figures (or None) and the
    subsets: what every other figure of an item set starts from."""
    counts = stats.count_matrix(arrays.item_index, arrays.value, arrays.label_set, arrays.n_items)
    summary = stats.item_summary(counts, arrays.label_set)
    pairwise = stats.pairwise_agreement(counts, arrays.label_set) if arrays.comparison else None
    return counts, summary, pairwise, stats.batch_subsets(arrays.comparison, summary, pairwise)


def _items_key(keep: np.ndarray) -> bytes:
    """The same bytes for the same item mask (over the same batch's items)."""
    return np.packbits(keep).tobytes()


def _figures(
    arrays: BatchArrays,
    sources: list[SourceScores],
    n_resamples: int,
    seed: int,
    group_by: str | None,
    progress: Callable[[int, int], None] | None,
    items: tuple | None = None,
) -> _Figures:
    is_pairwise = arrays.comparison
    counts, summary, pairwise, subsets = items or _item_figures(arrays)
    # The figures that run on one core first, while the report's other thread (the
    # annotators' competence) runs on the second; then the bootstrap, on both.
    agreement = _agreement_entry(
        stats.agreement_summary(
            arrays.item_index,
            arrays.annotator_index,
            arrays.value,
            arrays.label_set,
            arrays.n_items,
        ),
        is_pairwise,
    )
    annotators = annotator_entries(arrays)
    validity = validity_entry(arrays, group_by)
    # One call for all sources: sources seeing the same items share each subset's resamples.
    per_source = stats.correlate_sources_subsets(
        [source.scores for source in sources],
        summary["mean"],
        subsets,
        n_resamples=n_resamples,
        seed=seed,
        progress=progress,
    )
    correlations: list[CorrelationEntry] = []
    for source, results in zip(sources, per_source, strict=True):
        for subset, result in results.items():
            correlations.append(_correlation_entry(source, subset, result))
    return _Figures(
        counts=counts,
        summary=summary,
        pairwise=pairwise,
        subsets=subsets,
        correlations=correlations,
        agreement=agreement,
        annotators=annotators,
        validity=validity,
        arrays=arrays,
    )


# ---------------------------------------------------------------------------- categories

# A category (or sub-category) with fewer labelled items than this is marked ``small``:
# its figures are computed and shown, but a Spearman rho over fewer than 30 items has a
# 95 % interval of about +-0.36 or wider, too loose to compare categories by.
MIN_CATEGORY_ITEMS = 30


def category_groups(arrays: BatchArrays) -> list[tuple[str, str | None, np.ndarray]]:
    """``(category, subcategory, item mask)`` of every group ``by_category`` reports: each
    category of the batch's items (sorted by name, items without one, ``""``, last), each
    followed by its sub-categories (``subcategory`` ``None``: the whole category) when
    any of its items has one. None at all when no item has a category."""
    if len(arrays.categories) != arrays.n_items or not any(arrays.categories):
        return []
    categories = np.array(arrays.categories, dtype=object)
    subcategories = np.array(arrays.subcategories or [""] * arrays.n_items, dtype=object)
    groups: list[tuple[str, str | None, np.ndarray]] = []
    for category in sorted(set(arrays.categories), key=lambda name: (name == "", name)):
        in_category = categories == category
        groups.append((category, None, in_category))
        mine = sorted(set(subcategories[in_category].tolist()), key=lambda n: (n == "", n))
        if any(mine):
            groups += [(category, sub, in_category & (subcategories == sub)) for sub in mine]
    return groups


def _category_entry(category: str, subcategory: str | None, figures: _Figures) -> CategoryEntry:
    arrays, summary = figures.arrays, figures.summary
    labelled = figures.subsets["full"]
    n_items = int(labelled.sum())
    means, spreads = summary["mean"][labelled], summary["std"][labelled]
    return {
        "category": category,
        "subcategory": subcategory,
        "n_items": n_items,
        "n_labels": int(arrays.value.size),
        "n_annotators": arrays.n_annotators,
        "small": n_items < MIN_CATEGORY_ITEMS,
        "mean_rating": _number(np.mean(means)) if n_items else None,
        "mean_std": _number(np.mean(spreads)) if n_items else None,
        "subset_sizes": {name: int(mask.sum()) for name, mask in figures.subsets.items()},
        "agreement": figures.agreement,
        "correlations": figures.correlations,
        "by_kind": _by_kind(figures.correlations, list(figures.subsets)),
        "annotators": [
            {
                key: value
                for key, value in entry.items()
                if key not in ("attention_checks_passed", "attention_checks_failed")
            }
            for entry in figures.annotators
        ],
        "validity": figures.validity,
    }


def _tell(progress: Callable[[int, int], None] | None, done: int, total: int) -> None:
    if progress is not None:
        progress(done, total)


def _number(value: float | np.floating | None) -> float | None:
    """A finite float, or ``None`` for a missing, NaN or infinite value (JSON has no NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def _item_entries(
    arrays: BatchArrays,
    counts: np.ndarray,
    summary: dict[str, np.ndarray],
    agreement: dict[str, np.ndarray] | None,
    labelled: np.ndarray,
) -> list[ItemEntry]:
    labels = [str(int(label)) for label in arrays.label_set]
    with_taxonomy = len(arrays.categories) == arrays.n_items
    rows = np.flatnonzero(labelled)
    # Whole columns to Python numbers at once: a report has one entry per labelled item.
    columns = {name: summary[name][rows].tolist() for name in ("n", "mean", "std", "entropy_bits")}
    if agreement is not None:
        columns.update(
            {name: agreement[name][rows].tolist() for name in ("agreement", "p_disagree")}
        )
    entries = []
    for at, (i, item_counts) in enumerate(zip(rows.tolist(), counts[rows].tolist(), strict=True)):
        entry: ItemEntry = {
            "item_id": arrays.item_ids[i],
            "category": arrays.categories[i] if with_taxonomy else "",
            "subcategory": arrays.subcategories[i] if with_taxonomy else "",
            "n": int(columns["n"][at]),
            "counts": dict(zip(labels, item_counts, strict=True)),
            "mean": _finite(columns["mean"][at]),
            "std": _finite(columns["std"][at]),
            "entropy_bits": _finite(columns["entropy_bits"][at]),
        }
        if agreement is not None:
            entry["agreement"] = _finite(columns["agreement"][at])
            entry["p_disagree"] = _finite(columns["p_disagree"][at])
        entries.append(entry)
    return entries


def _finite(value: float) -> float | None:
    """``_number`` of a Python float (or int): itself when finite, else ``None``."""
    return float(value) if math.isfinite(value) else None


def _correlation_entry(
    source: SourceScores, subset: str, result: stats.BootstrapCorrelation
) -> CorrelationEntry:
    spearman, pearson = result.spearman, result.pearson
    entry: CorrelationEntry = {
        "source": source.name,
        "kind": source.kind,
        "subset": subset,
        "n": int(spearman.n),
        "spearman": correlation_figures(spearman),
        "pearson": correlation_figures(pearson),
    }
    reason = spearman.reason or pearson.reason
    if entry["spearman"] is None or entry["pearson"] is None:
        entry["reason"] = reason or "undefined"
    return entry


def correlation_figures(result: stats.CorrelationResult) -> CorrelationFigures | None:
    """``{"r", "p", "ci95"}`` of a correlation as the report has it; ``None`` when undefined.

    An interval with a non-finite end is reported as no interval.
    """
    r = _number(result.r)
    if r is None:
        return None
    ci95 = None
    if result.ci95 is not None:
        low, high = _number(result.ci95[0]), _number(result.ci95[1])
        if low is not None and high is not None:
            ci95 = [low, high]
    return {"r": r, "p": _number(result.p), "p_method": result.p_method, "ci95": ci95}


def _agreement_entry(summary: stats.AgreementSummary, pairwise: bool) -> Agreement:
    entry: Agreement = {
        "krippendorff_alpha_ordinal": _number(summary.krippendorff_alpha_ordinal),
        "krippendorff_alpha_interval": _number(summary.krippendorff_alpha_interval),
        "mean_entropy_bits": _number(summary.mean_entropy_bits),
        "mean_grouped_entropy_bits": _number(summary.mean_grouped_entropy_bits),
        "mean_gini_impurity": _number(summary.mean_gini_impurity),
        "mean_pairwise_annotator_disagreement": _number(
            summary.mean_pairwise_annotator_disagreement
        ),
        "mean_majority_share": _number(summary.mean_majority_share),
    }
    if pairwise:
        entry["mean_p_disagree"] = _number(summary.mean_p_disagree)
    return entry


def _by_kind(correlations: list[CorrelationEntry], subset_names: list[str]) -> list[ByKindEntry]:
    rows: list[ByKindEntry] = []
    for kind in SOURCE_KINDS:
        of_kind = [entry for entry in correlations if entry["kind"] == kind]
        if not of_kind:
            continue
        for subset in subset_names:
            entries = [entry for entry in of_kind if entry["subset"] == subset]
            spearman = [e["spearman"]["r"] for e in entries if e["spearman"] is not None]
            pearson = [e["pearson"]["r"] for e in entries if e["pearson"] is not None]
            rows.append(
                {
                    "kind": kind,
                    "subset": subset,
                    "spearman_mean": _number(np.mean(spearman)) if spearman else None,
                    "pearson_mean": _number(np.mean(pearson)) if pearson else None,
                    "n_sources": len(spearman),
                }
            )
    return rows
