"""The analysis report page of a batch, under ``/manage/<slug>/report`` (ANALYSIS.md).

Researchers and admins (``roles.can_analyse``) see the newest finished analysis of a batch:
summary and agreement figures, the headline comparison of model–human Spearman ρ on the
full set against the similar-quality and high-disagreement subsets, charts (inline SVG from
``analysis.plots``), the item and annotator tables, and downloads (the report JSON and
three CSV tables). Without a report the page offers "Run analysis", which starts an
``analysis`` job and follows its progress through ``/api/v1/jobs/<id>``.

Views stay thin: the report comes from ``analysis.services.analyses.latest_report``; this
module only arranges it for display and download.
"""

import csv
import io
from collections.abc import Iterable, Iterator

import numpy as np
from django import forms
from django.contrib import messages
from django.core.cache import cache
from django.http import (
    FileResponse,
    Http404,
    HttpRequest,
    HttpResponse,
    JsonResponse,
    StreamingHttpResponse,
)
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.safestring import mark_safe
from django.views.decorators.http import require_GET, require_POST

from analysis import plots
from analysis.loading import BatchArrays, load_scores
from analysis.services.analyses import (
    DEFAULT_RESAMPLES,
    MAX_RESAMPLES,
    latest_report,
    validate_settings,
)
from analysis.services.scores import import_scores
from annotation import roles
from annotation.models import Batch, BatchKind, Item, Job
from annotation.services.errors import ServiceError
from annotation.services.exporting import neutralise_formula
from annotation.services.importing import ImportRejected
from annotation.services.jobs import job_files_dir, start_job
from annotation.views.staff_pages import render_batch_page, staff_page

try:  # written alongside this page; the page works without it
    from analysis.selectors import coverage as score_coverage
except ImportError:  # pragma: no cover - depends on what else is installed
    score_coverage = None

ITEM_ROWS_SHOWN = 2000
ANNOTATOR_ROWS_SHOWN = 2000
CHART_CACHE_SECONDS = 24 * 3600
CSV_CHUNK_ROWS = 500
DEFAULT_SUBSETS = {
    "absolute": {"similar": "tukey_k1.5", "disagree": "top_entropy_10pct"},
    "pairwise": {"similar": "most_ties_80pct", "disagree": "least_agreement_80pct"},
}
KIND_NAMES = {
    "lm": "Language models",
    "reward_model": "Reward models",
    "judge": "LLM judges",
    "other": "Other sources",
}
AGREEMENT_FIGURES = [
    ("krippendorff_alpha_ordinal", "Krippendorff α (ordinal)", "1 = perfect agreement"),
    ("krippendorff_alpha_interval", "Krippendorff α (interval)", "1 = perfect agreement"),
    ("mean_entropy_bits", "Mean entropy (bits)", "over the 5 labels; 0 … log₂5 ≈ 2.32"),
    ("mean_grouped_entropy_bits", "Mean entropy, 3 groups (bits)", "low / mid / high"),
    ("mean_gini_impurity", "Mean Gini impurity", "1 − Σ p²"),
    (
        "mean_pairwise_annotator_disagreement",
        "Annotator pairs that differ",
        "share of pairs on an item",
    ),
    ("mean_majority_share", "Outside the top label", "1 − share of the most common label"),
    ("mean_p_disagree", "Mean p_disagree", "pairwise: share against the majority side"),
]
SCATTER_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


# --------------------------------------------------------------------------- forms


class RunAnalysisForm(forms.Form):
    bootstrap = forms.IntegerField(
        label="Bootstrap resamples",
        min_value=0,
        max_value=MAX_RESAMPLES,
        initial=DEFAULT_RESAMPLES,
        help_text="For the 95 % confidence intervals; 0 skips them.",
    )
    seed = forms.IntegerField(
        label="Seed", min_value=0, initial=0, help_text="Same seed, same intervals."
    )


# --------------------------------------------------------------------------- helpers


def _abilities(user) -> dict[str, bool]:
    """What the staff base template needs to show the user's role."""
    return {
        "can_manage": roles.can_manage_batches(user),
        "can_export": roles.can_export(user),
        "can_analyse": roles.can_analyse(user),
    }


def _analysis_jobs(batch: Batch):
    return Job.objects.filter(batch=batch, kind=Job.Kind.ANALYSIS)


def _active_job(batch: Batch) -> Job | None:
    return (
        _analysis_jobs(batch)
        .filter(state__in=[Job.State.PENDING, Job.State.RUNNING])
        .order_by("-created_at")
        .first()
    )


def _failed_job(batch: Batch) -> Job | None:
    """The newest finished analysis, if it failed (a report may still be shown: an older one)."""
    newest = (
        _analysis_jobs(batch)
        .filter(state__in=[Job.State.SUCCEEDED, Job.State.FAILED])
        .order_by("-created_at")
        .first()
    )
    return newest if newest is not None and newest.state == Job.State.FAILED else None


def _job_status(job: Job) -> dict:
    return {
        "id": str(job.pk),
        "state": job.state,
        "progress": job.progress,
        "total": job.total,
        "message": job.message,
        "status_url": reverse("api-job", args=[job.pk]),
    }


def _report_or_404(batch: Batch) -> tuple[Job, dict]:
    found = latest_report(batch)
    if found is None:
        raise Http404(f"Batch {batch.slug} has no finished analysis yet.")
    return found


def fmt(value, digits: int = 3) -> str:
    """A number for display: fixed decimals, a real minus sign, ``—`` when missing."""
    if value is None:
        return "—"
    return f"{value:.{digits}f}".replace("-", "−")


def _fmt_p(p) -> str:
    if p is None:
        return "—"
    return "< 0.001" if p < 0.001 else f"{p:.3f}"


def _ci_text(ci) -> str:
    return f"[{fmt(ci[0])}, {fmt(ci[1])}]" if ci else ""


# --------------------------------------------------------------------------- headline table


def _subset_choice(request: HttpRequest, name: str, family, default: str) -> str:
    options = [subset for subset in family.subsets if subset != "full"] if family else []
    wanted = request.GET.get(name, "")
    if wanted in options:
        return wanted
    if default in options:
        return default
    return options[len(options) // 2] if options else ""


def _source_cell(entry: dict | None) -> dict:
    if entry is None:
        return {"r": "—", "ci": "", "n": "", "reason": "not scored", "missing": True}
    spearman, pearson = entry.get("spearman"), entry.get("pearson")
    n = f"n = {entry['n']:,}"
    if spearman is None:
        return {
            "r": "—",
            "ci": "",
            "n": n,
            "reason": entry.get("reason") or "undefined",
            "missing": True,
        }
    title = f"Spearman ρ = {fmt(spearman['r'])}, p {_fmt_p(spearman['p'])}"
    if pearson is not None:
        title += f"; Pearson r = {fmt(pearson['r'])} {_ci_text(pearson.get('ci95'))}".rstrip()
    return {
        "r": fmt(spearman["r"]),
        "ci": _ci_text(spearman.get("ci95")),
        "n": n,
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
        "reason": "",
        "title": f"Pearson r (mean) = {fmt(entry.get('pearson_mean'))}",
        "missing": False,
    }


def headline_rows(report: dict) -> list[dict]:
    """One row per source and per kind, with a display cell for every subset."""
    subsets = list(report.get("subsets", {}))
    sizes = {name: len(ids) for name, ids in report.get("subsets", {}).items()}
    by_source: dict[str, dict[str, dict]] = {}
    kinds_of: dict[str, str] = {}
    for entry in report.get("correlations", []):
        by_source.setdefault(entry["source"], {})[entry["subset"]] = entry
        kinds_of[entry["source"]] = entry["kind"]
    names = [s["source"] for s in report.get("sources", []) if s["source"] in by_source]
    names += [name for name in by_source if name not in names]
    rows = [
        {
            "label": name,
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
                "kind": kind,
                "kind_name": "",
                "is_kind": True,
                "cells": {
                    subset: _kind_cell(entries.get(subset), sizes.get(subset)) for subset in subsets
                },
            }
        )
    return rows


def _headline(request: HttpRequest, report: dict) -> dict:
    families = {
        family.key: family
        for family in plots.subset_families(report["kind"], report.get("subsets", {}))
    }
    defaults = DEFAULT_SUBSETS.get(report["kind"], {})
    similar = _subset_choice(
        request, "similar", families.get("similar"), defaults.get("similar", "")
    )
    disagree = _subset_choice(
        request, "disagree", families.get("disagree"), defaults.get("disagree", "")
    )
    sizes = {name: len(ids) for name, ids in report.get("subsets", {}).items()}
    columns = [{"key": "full", "subset": "full", "title": "Full set", "options": []}]
    for key, chosen, title in [
        ("similar", similar, "Similar quality"),
        ("disagree", disagree, "High disagreement"),
    ]:
        family = families.get(key)
        if family is None or not chosen:
            continue
        columns.append(
            {
                "key": key,
                "subset": chosen,
                "title": title,
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


# --------------------------------------------------------------------------- charts


def _charts(job: Job, report: dict) -> list[dict]:
    """The report's charts as inline SVG, rendered once per finished job (then cached)."""
    key = f"analysis-report-charts:{job.pk}"
    charts = cache.get(key)
    if charts is None:
        charts = _render_charts(report)
        cache.set(key, charts, CHART_CACHE_SECONDS)
    return [{**chart, "svg": mark_safe(chart["svg"])} for chart in charts]


def _render_charts(report: dict) -> list[dict]:
    families = plots.subset_families(report["kind"], report.get("subsets", {}))
    sizes = {name: len(ids) for name, ids in report.get("subsets", {}).items()}
    items, pairwise = report.get("items", []), report["kind"] == "pairwise"
    candidates = [
        (
            "correlations",
            "Model–human Spearman ρ across the subsets",
            "Each line is a score source; the band is its 95 % bootstrap interval. Left: "
            "items of similar quality; right: items with the most disagreement. A gap "
            "means no correlation there (fewer than 3 items, or all scores or means equal).",
            "wide",
            lambda: plots.correlation_chart(
                report.get("correlations", []), families, subset_sizes=sizes
            ),
        ),
        (
            "by-kind",
            "The same, averaged by kind of source",
            "Mean Spearman ρ over the sources of each kind (the study's Fig. 10/11).",
            "wide",
            lambda: plots.by_kind_chart(report.get("by_kind", []), families, subset_sizes=sizes),
        ),
        (
            "entropy",
            "Disagreement per item",
            "Shannon entropy of each item's labels: 0 when everyone agrees, log₂5 ≈ 2.32 "
            "bits when the labels spread evenly over the five choices.",
            "half",
            lambda: plots.entropy_histogram(items),
        ),
        (
            "p-disagree",
            "Disagreement per pair",
            "Share of an item's labels against the side most annotators took "
            "(0 = unanimous, 0.5 = split evenly).",
            "half",
            lambda: plots.p_disagree_histogram(items) if pairwise else None,
        ),
        (
            "agreement",
            "Agreement across the batch",
            "Krippendorff's α (1 = perfect agreement, 0 = chance) and the item means of "
            "the disagreement measures (0 = everyone agrees).",
            "half",
            lambda: plots.agreement_chart(report.get("agreement", {})),
        ),
        (
            "crowd",
            "Individual versus collective preference",
            "Each annotator's Spearman ρ with the mean of the other annotators on the "
            "same items: low values flag idiosyncratic annotators.",
            "half",
            lambda: plots.crowd_spearman_histogram(report.get("annotators", [])),
        ),
    ]
    charts = []
    for key, title, caption, width, draw in candidates:
        svg = draw()
        if svg is not None:
            charts.append(
                {"key": key, "title": title, "caption": caption, "width": width, "svg": svg}
            )
    return charts


def _item_arrays(batch: Batch) -> BatchArrays:
    """Items and their responses only (no labels): enough for ``load_scores``."""
    rows = list(
        Item.objects.filter(batch=batch)
        .order_by("position")
        .values_list("pk", "item_id", "response_id", "response_a_id", "response_b_id")
    )
    if batch.kind == BatchKind.PAIRWISE:
        responses = np.array([(r[3], r[4]) for r in rows], dtype=np.int64).reshape(len(rows), 2)
    else:
        responses = np.array([r[2] for r in rows], dtype=np.int64)
    empty = np.empty(0, dtype=np.int64)
    return BatchArrays(
        slug=batch.slug,
        kind=batch.kind,
        label_set=np.empty(0, dtype=np.int64),
        item_ids=[r[1] for r in rows],
        item_pks=np.array([r[0] for r in rows], dtype=np.int64),
        response_pks=responses,
        item_index=empty,
        annotator_index=empty,
        value=empty,
        duration_ms=np.empty(0),
    )


# --------------------------------------------------------------------------- tables


def _item_rows(report: dict) -> list[dict]:
    """The first rows of the item table: display text and the raw value to sort by."""
    keys = ["mean", "std", "entropy_bits"]
    if report["kind"] == "pairwise":
        keys += ["agreement", "p_disagree"]
    return [
        {
            "item_id": item["item_id"],
            "n": item["n"],
            "counts": " · ".join(str(count) for count in item.get("counts", {}).values()),
            "cells": [
                {
                    "value": "" if item.get(key) is None else repr(item[key]),
                    "text": fmt(item.get(key)),
                }
                for key in keys
            ],
        }
        for item in report.get("items", [])[:ITEM_ROWS_SHOWN]
    ]


def _annotator_rows(report: dict) -> list[dict]:
    rows = []
    for entry in report.get("annotators", [])[:ANNOTATOR_ROWS_SHOWN]:
        median = entry.get("median_duration_ms")
        passed = entry.get("attention_checks_passed", 0)
        failed = entry.get("attention_checks_failed", 0)
        rows.append(
            {
                **entry,
                "median_seconds": None if median is None else round(median / 1000, 1),
                "checks": passed + failed,
                "crowd_text": fmt(entry.get("crowd_spearman")),
                "crowd_p_text": _fmt_p(entry.get("crowd_spearman_p")),
            }
        )
    return rows


def _sources(batch: Batch, report: dict) -> tuple[list[dict], bool]:
    """Score sources with coverage of the batch's items (live), else the report's counts."""
    if score_coverage is not None:
        sources = score_coverage(batch)
        for source in sources:
            source["coverage_percent"] = 100 * source["coverage"]
    else:
        sources = [dict(source) for source in report.get("sources", [])]
    for source in sources:
        source["kind_name"] = plots.KIND_NAMES.get(source["kind"], source["kind"])
    return sources, score_coverage is not None


def _agreement(report: dict) -> list[dict]:
    agreement = report.get("agreement", {})
    figures = []
    for key, label, note in AGREEMENT_FIGURES:
        if key not in agreement:
            continue
        if key == "mean_grouped_entropy_bits" and report["kind"] == "pairwise":
            note = "B / tie / A"
        figures.append({"key": key, "label": label, "note": note, "value": fmt(agreement[key])})
    return figures


# --------------------------------------------------------------------------- pages


@staff_page(roles.can_analyse)
@require_GET
def report_page(request: HttpRequest, slug: str) -> HttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    found = latest_report(batch)
    job, report = found if found is not None else (None, None)
    active = _active_job(batch)
    context = {
        "batch": batch,
        "job": job,
        "report": report,
        "active_job": active,
        "active_status": _job_status(active) if active else None,
        "failed_job": _failed_job(batch),
        "form": RunAnalysisForm(initial=_run_initial(job)),
        "run_url": reverse("manage-report-run", args=[batch.slug]),
        **_abilities(request.user),
    }
    if report is not None:
        sources, live_coverage = _sources(batch, report)
        items = report.get("items", [])
        context.update(
            {
                "settings": report.get("settings", {}),
                "headline": _headline(request, report),
                "charts": _charts(job, report),
                "has_scores": bool(report.get("correlations")),
                "show_scatter": any(
                    c["subset"] == "full" and c["n"] > 0 for c in report.get("correlations", [])
                ),
                "agreement": _agreement(report),
                "sources": sources,
                "live_coverage": live_coverage,
                "item_rows": _item_rows(report),
                "n_items_total": len(items),
                "items_capped": len(items) > ITEM_ROWS_SHOWN,
                "item_rows_shown": ITEM_ROWS_SHOWN,
                "label_names": list(items[0]["counts"]) if items else [],
                "pairwise": report["kind"] == "pairwise",
                "annotator_rows": _annotator_rows(report),
                "n_annotators_total": len(report.get("annotators", [])),
                "annotators_capped": len(report.get("annotators", [])) > ANNOTATOR_ROWS_SHOWN,
            }
        )
    return render(request, "analysis/report.html", context)


def _run_initial(job: Job | None) -> dict:
    params = (job.params or {}) if job is not None else {}
    return {
        "bootstrap": params.get("bootstrap", DEFAULT_RESAMPLES),
        "seed": params.get("seed", 0),
    }


def _wants_json(request: HttpRequest) -> bool:
    return "application/json" in request.headers.get("Accept", "")


@staff_page(roles.can_analyse)
@require_POST
def run_analysis(request: HttpRequest, slug: str) -> HttpResponse:
    """Start an analysis job; JSON (for the page's script) or a redirect back to the page."""
    batch = get_object_or_404(Batch, slug=slug)
    form = RunAnalysisForm(request.POST)
    if not form.is_valid():
        problems = "; ".join(
            f"{form[field].label}: {' '.join(errors)}" for field, errors in form.errors.items()
        )
        if _wants_json(request):
            return JsonResponse({"error": problems}, status=400)
        messages.error(request, f"Analysis not started — {problems}")
        return redirect("manage-report", slug=batch.slug)
    try:
        bootstrap, seed = validate_settings(
            form.cleaned_data["bootstrap"], form.cleaned_data["seed"]
        )
        job = start_job("analysis", batch, {"bootstrap": bootstrap, "seed": seed}, request.user)
    except ServiceError as error:
        if _wants_json(request):
            return JsonResponse({"error": str(error)}, status=400)
        messages.error(request, str(error))
        return redirect("manage-report", slug=batch.slug)
    job.refresh_from_db()
    if _wants_json(request):
        return JsonResponse(_job_status(job), status=202)
    if job.state == Job.State.SUCCEEDED:
        messages.success(request, "Analysis finished.")
    elif job.state == Job.State.FAILED:
        messages.error(request, f"Analysis failed: {job.message}")
    else:
        messages.success(request, "Analysis started; this page follows its progress.")
    return redirect("manage-report", slug=batch.slug)


# --------------------------------------------------------------------------- downloads


@staff_page(roles.can_analyse)
@require_GET
def report_json(request: HttpRequest, slug: str) -> FileResponse:
    batch = get_object_or_404(Batch, slug=slug)
    job, _ = _report_or_404(batch)
    path = job_files_dir() / job.result_path
    return FileResponse(
        open(path, "rb"),  # FileResponse closes it
        as_attachment=True,
        filename=f"{batch.slug}-report.json",
        content_type="application/json",
    )


def _csv_cell(value):
    if value is None:
        return ""
    return neutralise_formula(value)


def _csv_stream(columns: list[str], rows: Iterable[list]) -> Iterator[str]:
    """CSV text (csv module, CRLF line ends) in chunks of a few hundred rows."""
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow([_csv_cell(column) for column in columns])
    for index, row in enumerate(rows, start=1):
        writer.writerow([_csv_cell(value) for value in row])
        if index % CSV_CHUNK_ROWS == 0:
            yield buffer.getvalue()
            buffer.seek(0)
            buffer.truncate()
    yield buffer.getvalue()


def _csv_response(batch: Batch, name: str, columns: list[str], rows) -> StreamingHttpResponse:
    response = StreamingHttpResponse(
        _csv_stream(columns, rows), content_type="text/csv; charset=utf-8"
    )
    response["Content-Disposition"] = f'attachment; filename="{batch.slug}-{name}.csv"'
    return response


def item_table(report: dict) -> tuple[list[str], Iterator[list]]:
    """Columns and rows of items.csv: the per-item figures and subset membership (1/0)."""
    items = report.get("items", [])
    labels = list(items[0]["counts"]) if items else []
    pairwise = report["kind"] == "pairwise"
    subsets = {name: set(ids) for name, ids in report.get("subsets", {}).items()}
    columns = ["item_id", "n", *[f"count_{label}" for label in labels]]
    columns += ["mean", "std", "entropy_bits"]
    if pairwise:
        columns += ["agreement", "p_disagree"]
    columns += [f"in_{name}" for name in subsets]

    def rows():
        for item in items:
            row = [item["item_id"], item["n"], *[item["counts"].get(lb) for lb in labels]]
            row += [item.get("mean"), item.get("std"), item.get("entropy_bits")]
            if pairwise:
                row += [item.get("agreement"), item.get("p_disagree")]
            row += [int(item["item_id"] in members) for members in subsets.values()]
            yield row

    return columns, rows()


CORRELATION_COLUMNS = [
    "source",
    "kind",
    "subset",
    "n",
    "spearman_r",
    "spearman_p",
    "spearman_ci_low",
    "spearman_ci_high",
    "pearson_r",
    "pearson_p",
    "pearson_ci_low",
    "pearson_ci_high",
    "reason",
]


def correlation_table(report: dict) -> tuple[list[str], Iterator[list]]:
    def figures(result):
        if result is None:
            return [None] * 4
        ci = result.get("ci95") or [None, None]
        return [result["r"], result["p"], ci[0], ci[1]]

    def rows():
        for entry in report.get("correlations", []):
            yield [
                entry["source"],
                entry["kind"],
                entry["subset"],
                entry["n"],
                *figures(entry.get("spearman")),
                *figures(entry.get("pearson")),
                entry.get("reason"),
            ]

    return CORRELATION_COLUMNS, rows()


ANNOTATOR_COLUMNS = [
    "annotator",
    "n_labels",
    "n_compared",
    "crowd_spearman",
    "crowd_spearman_p",
    "median_duration_ms",
    "attention_checks_passed",
    "attention_checks_failed",
    "reason",
]


def annotator_table(report: dict) -> tuple[list[str], Iterator[list]]:
    rows = ([entry.get(column) for column in ANNOTATOR_COLUMNS] for entry in report["annotators"])
    return ANNOTATOR_COLUMNS, rows


@staff_page(roles.can_analyse)
@require_GET
def items_csv(request: HttpRequest, slug: str) -> StreamingHttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    _, report = _report_or_404(batch)
    return _csv_response(batch, "items", *item_table(report))


@staff_page(roles.can_analyse)
@require_GET
def correlations_csv(request: HttpRequest, slug: str) -> StreamingHttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    _, report = _report_or_404(batch)
    return _csv_response(batch, "correlations", *correlation_table(report))


@staff_page(roles.can_analyse)
@require_GET
def annotators_csv(request: HttpRequest, slug: str) -> StreamingHttpResponse:
    batch = get_object_or_404(Batch, slug=slug)
    _, report = _report_or_404(batch)
    return _csv_response(batch, "annotators", *annotator_table(report))


@staff_page(roles.can_analyse)
@require_GET
def score_scatter(request: HttpRequest, slug: str) -> HttpResponse:
    """Mean human rating (from the report) against each source's current scores, as SVG."""
    batch = get_object_or_404(Batch, slug=slug)
    _, report = _report_or_404(batch)
    arrays = _item_arrays(batch)
    mean_of = {item["item_id"]: item.get("mean") for item in report.get("items", [])}
    means = np.array(
        [np.nan if mean_of.get(i) is None else mean_of[i] for i in arrays.item_ids], dtype=float
    )
    panels = [
        plots.ScatterPanel(source.name, source.kind, source.scores, means)
        for source in load_scores(batch, arrays)
    ]
    svg = plots.score_scatter(panels, pairwise=batch.kind == BatchKind.PAIRWISE)
    if svg is None:
        raise Http404("No score source scores a labelled item of this batch.")
    response = HttpResponse(svg, content_type="image/svg+xml; charset=utf-8")
    response["Content-Security-Policy"] = SCATTER_CSP
    response["Cache-Control"] = "private, max-age=300"
    return response


@staff_page(roles.can_analyse)
@require_POST
def upload_scores(request: HttpRequest, slug: str) -> HttpResponse:
    """The batch page's score upload: all or nothing, problems listed on the batch page."""
    batch = get_object_or_404(Batch, slug=slug)
    upload = request.FILES.get("file")
    if upload is None:
        return render_batch_page(
            request, batch, score_problems=["Choose a .jsonl or .csv file of scores."]
        )
    try:
        summary = import_scores(upload, filename=upload.name, batch=batch)
    except ImportRejected as rejected:
        return render_batch_page(
            request, batch, score_problems=rejected.problems, score_upload_name=upload.name
        )
    except ServiceError as error:
        return render_batch_page(
            request, batch, score_problems=[str(error)], score_upload_name=upload.name
        )
    messages.success(
        request,
        f"Imported {summary.scores_created} scores from {upload.name} "
        f"({summary.scores_unchanged} already stored; {summary.sources_created} new sources).",
    )
    return redirect("manage-batch", slug=batch.slug)
