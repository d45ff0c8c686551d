"""The report page's charts: which figures a report has, their captions, and the drawing
of each (cached per finished job), for the page and the figure downloads."""

from dataclasses import dataclass

import numpy as np

from analysis import plots, presentation
from analysis.bundle_charts import bundle_charts
from analysis.loading import load_items, load_scores
from analysis.report_kind import compares_two
from annotation.models import Batch
from core.jobs.subject_pages import cached_charts
from core.models import Job

# --------------------------------------------------------------------------- charts


@dataclass(frozen=True)
class ReportChart:
    """One chart of the report page: its card's title, caption and width, its drawing."""

    key: str
    title: str
    caption: str
    width: str
    drawing: plots.Drawing


CAPTIONS = {
    "correlations": (
        "Spearman ρ between each source's score and the items' mean human label, one line "
        "per source (in its colour on every chart); the band is the 95 % bootstrap "
        "interval (items resampled). Left: subsets of items of similar quality; right: "
        "subsets of items with the most disagreement (ANALYSIS.md, Subsets). A gap: ρ is "
        "undefined there (fewer than 3 items, or all scores or all means equal)."
    ),
    "by-kind": (
        "The mean of the sources' Spearman ρ within each kind of source (reward model, "
        "language model, LLM judge), per subset: the study's Fig. 10/11."
    ),
    "entropy": (
        "Shannon entropy of each item's labels over the 5 possible labels, "
        "H = −Σ p·log₂ p with p = count / n: 0 when every annotator chose the same label, "
        "log₂5 ≈ 2.32 bits when the labels spread evenly over all five."
    ),
    "p-disagree": (
        "p_disagree = 1 − max(C_A + C_tie/2, C_B + C_tie/2) / n, where C_A, C_B and C_tie "
        "count the labels preferring A, preferring B, and ties (0). It is 0 when every "
        "label takes the same side and 0.5 when both sides weigh the same — which includes "
        "an item whose labels are all ties, where nobody disagreed (the axis says how many "
        "such items there are)."
    ),
    "agreement": (
        "Each panel on its measure's own scale. Krippendorff's α over all labels (ordinal "
        "and interval distance): 1 = perfect agreement, 0 = agreement at chance level, "
        "below 0 = systematic disagreement. Entropy in bits, mean over items, of the 5 "
        "labels and of 3 groups (absolute: 1–2 / 3 / 4–5; pairwise: B / tie / A). Shares, "
        "means over items: Gini impurity 1 − Σ p², the share of annotator pairs whose "
        "labels differ, 1 − the share of the most common label, and (pairwise) p_disagree."
    ),
    "crowd": (
        "Each annotator's Spearman ρ between their labels and the mean of the other "
        "annotators' labels on the same items (leave-one-out): low values flag "
        "idiosyncratic annotators, or a consistent minority view."
    ),
    "rankings": (
        "Each model's strength with its 95 % interval from a cluster bootstrap over "
        "annotators (people resampled with all their labels, not single votes). Pairwise: "
        "Bradley–Terry–Davidson log-strength (natural log, summing to zero over the models; "
        "ties by Davidson's parameter ν); absolute: the mean rating of the model's responses. "
        "Below each model: the same fit on the default similar-quality and high-disagreement "
        "subsets (ANALYSIS.md, Model rankings)."
    ),
    "competence": (
        "MACE competence of each annotator (Hovy et al. 2013): the estimated share of their "
        "labels that report the item's true label rather than a guess. MACE, like "
        "Dawid–Skene, assumes one true label per item: on open-ended items it measures "
        "consistency with the majority, not correctness."
    ),
    "calibration": (
        "For each source that gave label distributions: the mean Jensen–Shannon divergence "
        "(base 2, 0 = the same distribution, 1 = disjoint) between its distribution and the "
        "item's histogram of human labels, over items grouped by the entropy of the human "
        "labels (left: people agree; right: they disagree); ρ = Spearman between an item's "
        "divergence and its entropy."
    ),
    "scatter": (
        "Every labelled item: its mean human label against each source's score as imported "
        "now, one panel per source in the source's colour (above 5,000 items the points "
        "are binned: colour = number of items, log scale)."
    ),
}


def _report_charts(report: dict) -> list[ReportChart]:
    """The report's charts that have something to draw, in page order."""
    families = plots.subset_families(compares_two(report), report.get("subsets", {}))
    sizes = presentation.subset_sizes(report)
    items, pairwise = report.get("items", []), compares_two(report)
    candidates = [
        (
            "correlations",
            "Model–human Spearman ρ across the subsets",
            "wide",
            lambda: plots.correlation_drawing(
                report.get("correlations", []), families, subset_sizes=sizes
            ),
        ),
        (
            "by-kind",
            "The same, averaged by kind of source",
            "wide",
            lambda: plots.by_kind_drawing(report.get("by_kind", []), families, subset_sizes=sizes),
        ),
        ("entropy", "Disagreement per item", "half", lambda: plots.entropy_drawing(items)),
        (
            "p-disagree",
            "Disagreement per pair",
            "half",
            lambda: plots.p_disagree_drawing(items) if pairwise else None,
        ),
        (
            "agreement",
            "Agreement across the batch",
            "half",
            lambda: plots.agreement_drawing(report.get("agreement", {})),
        ),
        (
            "rankings",
            "Model rankings",
            "half",
            lambda: plots.ranking_drawing(report.get("rankings")),
        ),
        (
            "crowd",
            "Individual versus collective preference",
            "half",
            lambda: plots.crowd_spearman_drawing(report.get("annotators", [])),
        ),
        (
            "calibration",
            "Calibration to the human distribution",
            "half",
            lambda: plots.calibration_drawing(report.get("calibration"), _report_sources(report)),
        ),
        (
            "competence",
            "Annotator competence",
            "half",
            lambda: plots.competence_drawing(report.get("competence")),
        ),
    ]
    charts = []
    for key, title, width, draw in candidates:
        drawing = draw()
        if drawing is not None:
            charts.append(ReportChart(key, title, CAPTIONS[key], width, drawing))
    return charts


# the charts shown in the bundle sections rather than in the chart grid
BUNDLE_SECTION = "bundles"


def draw_page_charts(report: dict) -> list[dict]:
    """The report's charts as inline SVG (the analysis job draws them and stores them):
    the chart grid's, then the bundle sections' (``section``)."""
    grid = [
        {
            "key": chart.key,
            "title": chart.title,
            "caption": chart.caption,
            "width": chart.width,
            "svg": chart.drawing.svg(),
        }
        for chart in _report_charts(report)
    ]
    in_sections = [
        {
            "key": chart.key,
            "title": chart.title,
            "caption": chart.caption,
            "svg": chart.drawing.svg(),
            "section": BUNDLE_SECTION,
        }
        for chart in (bundle_charts(report) if report.get("bundles") else [])
    ]
    return grid + in_sections


def _stored_or_drawn(job: Job, report: dict) -> list[dict]:
    return cached_charts("analysis-v3", job, lambda: draw_page_charts(report))


def page_charts(job: Job, report: dict) -> list[dict]:
    """The chart grid's charts as inline SVG: those the job stored, else drawn (then
    cached)."""
    return [chart for chart in _stored_or_drawn(job, report) if "section" not in chart]


def page_bundle_charts(job: Job, report: dict) -> dict[str, dict]:
    """The bundle sections' charts as inline SVG, by key (stored or drawn as above)."""
    charts = _stored_or_drawn(job, report)
    return {chart["key"]: chart for chart in charts if chart.get("section") == BUNDLE_SECTION}


def scatter_figure(batch: Batch, report: dict) -> plots.Drawing | None:
    """Mean human label (from the report) against each source's current scores."""
    arrays = load_items(batch)
    mean_of = {item["item_id"]: item.get("mean") for item in report.get("items", [])}
    means = np.array(
        [np.nan if mean_of.get(i) is None else mean_of[i] for i in arrays.item_ids], dtype=float
    )
    panels = [
        plots.ScatterPanel(source.name, source.kind, source.scores, means)
        for source in load_scores(batch, arrays)
    ]
    return plots.scatter_drawing(
        panels,
        pairwise=batch.task_kind.comparison,
        colour_names=_report_sources(report),
    )


def _report_sources(report: dict) -> list[str]:
    """The names of the report's sources: what every chart keys its colours by."""
    return sorted({entry["source"] for entry in report.get("correlations", [])})


def report_figures(batch: Batch, report: dict) -> dict[str, ReportChart]:
    """Every chart of the report, the scatter plot and a bundled batch's charts included,
    by key."""
    figures = {chart.key: chart for chart in _report_charts(report)}
    for chart in bundle_charts(report):
        figures[chart.key] = ReportChart(
            chart.key, chart.title, chart.caption, "half", chart.drawing
        )
    scatter = scatter_figure(batch, report)
    if scatter is not None:
        figures["scatter"] = ReportChart(
            "scatter",
            "Mean human label against model score",
            CAPTIONS["scatter"],
            "wide",
            scatter,
        )
    return figures
