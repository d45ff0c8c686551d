"""The analysis report of ANALYSIS.md, built from arrays by ``analysis.metrics``.

Pure: takes ``BatchArrays`` and ``SourceScores`` (see ``analysis.loading``), returns a
JSON-ready dict in which every float is finite or ``null`` — never NaN or Infinity.

Choices the spec leaves open:
* ``n_items`` counts items with at least one counted label (the ``full`` subset); items
  without labels have no mean and are left out of ``items`` too.
* ``std`` is the population standard deviation (ddof = 0) of an item's labels.
* ``by_kind`` averages, per kind and subset, the Spearman ρ and Pearson r of the sources
  whose correlation is defined there; ``n_sources`` says how many that was.
"""

from collections.abc import Callable

import numpy as np

from analysis import metrics
from analysis.loading import BatchArrays, SourceScores

SOURCE_KINDS = ("lm", "reward_model", "judge", "other")


def build_report(
    arrays: BatchArrays,
    sources: list[SourceScores],
    *,
    n_resamples: int = 1000,
    seed: int = 0,
    progress: Callable[[int, int], None] | None = None,
) -> dict:
    pairwise = arrays.kind == "pairwise"
    counts = metrics.count_matrix(arrays.item_index, arrays.value, arrays.label_set, arrays.n_items)
    summary = metrics.item_summary(counts, arrays.label_set)
    agreement = metrics.pairwise_agreement(counts, arrays.label_set) if pairwise else None
    subsets = metrics.batch_subsets(arrays.kind, summary, agreement)
    labelled = subsets["full"]
    steps = len(sources) + 2
    _tell(progress, 1, steps)

    # One call for all sources: sources seeing the same items share each subset's resamples.
    # Progress counts the distinct item sets (subsets x score coverage) as they finish.
    def tell_sets(done: int, total: int) -> None:
        nonlocal steps
        steps = total + 2
        _tell(progress, 1 + done, steps)

    per_source = metrics.correlate_sources_subsets(
        [source.scores for source in sources],
        summary["mean"],
        subsets,
        n_resamples=n_resamples,
        seed=seed,
        progress=tell_sets,
    )
    correlations = []
    for source, results in zip(sources, per_source, strict=True):
        for subset, result in results.items():
            correlations.append(_correlation_entry(source, subset, result))

    report = {
        "batch": arrays.slug,
        "kind": arrays.kind,
        "n_items": int(labelled.sum()),
        "n_labels": int(arrays.value.size),
        "n_annotators": arrays.n_annotators,
        "settings": {"bootstrap_resamples": n_resamples, "seed": seed},
        "items": _item_entries(arrays, counts, summary, agreement, labelled),
        "subsets": {
            name: [arrays.item_ids[i] for i in np.flatnonzero(mask)]
            for name, mask in subsets.items()
        },
        "correlations": correlations,
        "by_kind": _by_kind(correlations, list(subsets)),
        "agreement": _finite_dict(
            metrics.agreement_summary(
                arrays.item_index,
                arrays.annotator_index,
                arrays.value,
                arrays.label_set,
                arrays.n_items,
            )
        ),
        "annotators": _annotator_entries(arrays),
        "sources": [
            {
                "source": source.name,
                "kind": source.kind,
                "n_items_scored": int(np.isfinite(source.scores[labelled]).sum()),
            }
            for source in sources
        ],
    }
    _tell(progress, steps, steps)
    return report


def _tell(progress, done: int, total: int) -> None:
    if progress is not None:
        progress(done, total)


def _number(value) -> float | None:
    if value is None:
        return None
    value = float(value)
    return value if np.isfinite(value) else None


def _finite_dict(values: dict) -> dict:
    return {key: _number(value) for key, value in values.items()}


def _item_entries(arrays, counts, summary, agreement, labelled) -> list[dict]:
    labels = [str(int(label)) for label in arrays.label_set]
    entries = []
    for i in np.flatnonzero(labelled).tolist():
        entry = {
            "item_id": arrays.item_ids[i],
            "n": int(summary["n"][i]),
            "counts": dict(zip(labels, counts[i].tolist(), strict=True)),
            "mean": _number(summary["mean"][i]),
            "std": _number(summary["std"][i]),
            "entropy_bits": _number(summary["entropy_bits"][i]),
        }
        if agreement is not None:
            entry["agreement"] = _number(agreement["agreement"][i])
            entry["p_disagree"] = _number(agreement["p_disagree"][i])
        entries.append(entry)
    return entries


def _correlation_entry(source: SourceScores, subset: str, result) -> dict:
    spearman, pearson = result.spearman, result.pearson
    entry = {
        "source": source.name,
        "kind": source.kind,
        "subset": subset,
        "n": int(spearman.n),
        "spearman": _finite_result(spearman.as_report()),
        "pearson": _finite_result(pearson.as_report()),
    }
    reason = spearman.reason or pearson.reason
    if entry["spearman"] is None or entry["pearson"] is None:
        entry["reason"] = reason or "undefined"
    return entry


def _finite_result(result: dict | None) -> dict | None:
    if result is None or _number(result["r"]) is None:
        return None
    ci95 = result.get("ci95")
    if ci95 is not None:
        ci95 = [_number(ci95[0]), _number(ci95[1])]
        if None in ci95:
            ci95 = None
    return {"r": _number(result["r"]), "p": _number(result["p"]), "ci95": ci95}


def _by_kind(correlations: list[dict], subset_names: list[str]) -> list[dict]:
    rows = []
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


def _annotator_entries(arrays: BatchArrays) -> list[dict]:
    crowd = metrics.annotator_crowd_agreement(
        arrays.item_index,
        arrays.annotator_index,
        arrays.value,
        arrays.n_items,
        arrays.n_annotators,
    )
    medians = _median_by_group(arrays.annotator_index, arrays.duration_ms, arrays.n_annotators)
    checks = _attention_checks(arrays)
    entries = []
    for index, pseudonym in enumerate(arrays.annotators):
        result = crowd.crowd_spearman[index]
        entry = {
            "annotator": pseudonym,
            "n_labels": int(crowd.n_labels[index]),
            "n_compared": int(crowd.n_compared[index]),
            "crowd_spearman": _number(result.r),
            "crowd_spearman_p": _number(result.p),
            "median_duration_ms": _number(medians[index]),
            "attention_checks_passed": int(checks[0][index]),
            "attention_checks_failed": int(checks[1][index]),
        }
        if result.r is None:
            entry["reason"] = result.reason
        entries.append(entry)
    return entries


def _median_by_group(group: np.ndarray, values: np.ndarray, n_groups: int) -> np.ndarray:
    """Median of ``values`` per group, ignoring NaN; NaN for a group without values."""
    known = np.isfinite(values)
    group, values = group[known], values[known]
    order = np.lexsort((values, group))
    group, values = group[order], values[order]
    sizes = np.bincount(group, minlength=n_groups)
    ends = np.cumsum(sizes)
    starts = ends - sizes
    medians = np.full(n_groups, np.nan)
    has = sizes > 0
    low = starts[has] + (sizes[has] - 1) // 2
    high = starts[has] + sizes[has] // 2
    medians[has] = (values[low] + values[high]) / 2
    return medians


def _attention_checks(arrays: BatchArrays) -> tuple[np.ndarray, np.ndarray]:
    """Per annotator: labels on gold items that matched / missed the accepted answers."""
    passed = np.zeros(arrays.n_annotators, dtype=np.int64)
    failed = np.zeros(arrays.n_annotators, dtype=np.int64)
    gold_items = {i: set(g) for i, g in enumerate(arrays.gold) if g is not None}
    if not gold_items:
        return passed, failed
    on_gold = np.isin(arrays.item_index, list(gold_items))
    for item, annotator, value in zip(
        arrays.item_index[on_gold].tolist(),
        arrays.annotator_index[on_gold].tolist(),
        arrays.value[on_gold].tolist(),
        strict=True,
    ):
        if value in gold_items[item]:
            passed[annotator] += 1
        else:
            failed[annotator] += 1
    return passed, failed
