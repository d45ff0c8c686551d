"""The headline table: each source's (and each kind of source's) correlation on the full
set and on the chosen subsets."""

from analysis import plots
from analysis.presentation.base import KIND_NAMES, _ci_text, _p_phrase, fmt, subset_sizes
from analysis.report_kind import compares_two
from analysis.stats.subsets import families_for

# --------------------------------------------------------------------------- headline table


def _subset_choice(wanted: str, family, default: str) -> str:
    """The subset of ``family`` to show: the one asked for if it exists, else a default."""
    options = [subset for subset in family.subsets if subset != "full"] if family else []
    if wanted in options:
        return wanted
    if default in options:
        return default
    return options[len(options) // 2] if options else ""


def _source_cell(entry: dict | None) -> dict:
    """A correlation's display cell: ρ, its interval, ``n`` (the items it rests on) and its
    p-value in words (``p``, also in the hover title)."""
    if entry is None:
        return {"r": "—", "ci": "", "n": "", "p": "", "reason": "not scored", "missing": True}
    spearman, pearson = entry.get("spearman"), entry.get("pearson")
    n = f"n = {entry['n']:,}"
    if spearman is None:
        return {
            "r": "—",
            "ci": "",
            "n": n,
            "p": "",
            "reason": entry.get("reason") or "undefined",
            "missing": True,
        }
    p = _p_phrase(spearman["p"], entry["n"])
    if spearman.get("p_method") == "exact":
        p += " (exact)"
    title = f"Spearman ρ = {fmt(spearman['r'])}, {p}, n = {entry['n']:,}"
    if pearson is not None:
        title += f"; Pearson r = {fmt(pearson['r'])} {_ci_text(pearson.get('ci95'))}".rstrip()
    return {
        "r": fmt(spearman["r"]),
        "ci": _ci_text(spearman.get("ci95")),
        "n": n,
        "p": p,
        "reason": "",
        "title": title,
        "missing": False,
    }


def _kind_cell(entry: dict | None, subset_size: int | None) -> dict:
    if entry is None or entry.get("spearman_mean") is None:
        return {
            "r": "—",
            "ci": "",
            "n": "",
            "p": "",
            "reason": "no source of this kind is defined here",
            "missing": True,
        }
    sources = entry["n_sources"]
    n = f"mean of {sources} source{'s' if sources != 1 else ''}"
    if subset_size is not None:
        n += f" · {subset_size:,} items"
    return {
        "r": fmt(entry["spearman_mean"]),
        "ci": "",
        "n": n,
        "p": "",
        "reason": "",
        "title": f"Pearson r (mean) = {fmt(entry.get('pearson_mean'))}",
        "missing": False,
    }


def headline_rows(report: dict) -> list[dict]:
    """One row per source and per kind, with a display cell for every subset."""
    subsets = list(report.get("subsets", {}))
    sizes = subset_sizes(report)
    by_source: dict[str, dict[str, dict]] = {}
    kinds_of: dict[str, str] = {}
    for entry in report.get("correlations", []):
        by_source.setdefault(entry["source"], {})[entry["subset"]] = entry
        kinds_of[entry["source"]] = entry["kind"]
    names = [s["source"] for s in report.get("sources", []) if s["source"] in by_source]
    names += [name for name in by_source if name not in names]
    slots = plots.source_slots(by_source)  # the charts' colour of each source
    rows = [
        {
            "label": name,
            "swatch": f"source-colour-{slots[str(name)]}",
            "kind": kinds_of[name],
            "kind_name": plots.KIND_NAMES.get(kinds_of[name], kinds_of[name]),
            "is_kind": False,
            "cells": {subset: _source_cell(by_source[name].get(subset)) for subset in subsets},
        }
        for name in names
    ]
    by_kind: dict[str, dict[str, dict]] = {}
    for entry in report.get("by_kind", []):
        by_kind.setdefault(entry["kind"], {})[entry["subset"]] = entry
    for kind, entries in by_kind.items():
        rows.append(
            {
                "label": KIND_NAMES.get(kind, kind),
                "swatch": f"kind-colour-{kind if kind in plots.KIND_COLOURS else 'other'}",
                "kind": kind,
                "kind_name": "",
                "is_kind": True,
                "cells": {
                    subset: _kind_cell(entries.get(subset), sizes.get(subset)) for subset in subsets
                },
            }
        )
    return rows


def headline(report: dict, similar: str = "", disagree: str = "") -> dict:
    """The headline table: the full set, then one similar-quality and one high-disagreement
    subset (``similar`` / ``disagree`` when the report has them, else the defaults)."""
    families = {
        family.key: family
        for family in plots.subset_families(compares_two(report), report.get("subsets", {}))
    }
    wanted = {"similar": similar, "disagree": disagree}
    sizes = subset_sizes(report)
    columns = [{"key": "full", "subset": "full", "title": "Full set", "options": []}]
    for definition in families_for(compares_two(report)):
        key = definition.role
        family = families.get(key)
        chosen = _subset_choice(wanted[key], family, definition.default_subset)
        if family is None or not chosen:
            continue
        columns.append(
            {
                "key": key,
                "subset": chosen,
                "title": definition.title,
                "options": [
                    {
                        "value": subset,
                        "label": f"{subset} ({sizes.get(subset, 0):,} items)",
                        "selected": subset == chosen,
                    }
                    for subset in family.subsets
                    if subset != "full"
                ],
            }
        )
    rows = headline_rows(report)
    first_kind = next((row for row in rows if row["is_kind"]), None)
    for row in rows:
        row["first_kind"] = row is first_kind
        row["shown"] = [
            {"column": column["key"], **row["cells"][column["subset"]]} for column in columns
        ]
    return {
        "columns": columns,
        "rows": rows,
        "data": [row["cells"] for row in rows],
        "sizes": sizes,
    }
