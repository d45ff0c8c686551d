"""The charts of a bundled batch's report (ANALYSIS.md, "Bundles"): their titles and
captions, the drawings (``analysis.plots.bundles``) and their cache for the page.

The page shows each beside its table in the bundle sections (not in the general chart
grid): the analysis job draws them with the page's other charts and stores them
(``analysis.report_charts.draw_page_charts``), and ``report_figures`` adds them to the
figure downloads. A report without a ``bundles`` section has none."""

from dataclasses import dataclass

from analysis import plots
from analysis.presentation.base import min_p_value_n
from analysis.presentation.bundles import position_sentence, relation_sentence

BUNDLE_CAPTIONS = {
    "bundle-positions": (
        "The mean counted label at each position within the bundle (1 = the item shown "
        "first to that participant), the number of labels at each position under it. The "
        "test of no trend: Spearman ρ of label against position over all labels, and a "
        "two-sided permutation p-value that shuffles the positions within each "
        "participant's set (keeping each person's own level)."
    ),
    "bundle-w": (
        "Kendall's coefficient of concordance W of each bundle: how alike its complete "
        "participants rank its items, with the correction for ties (0 = no shared "
        "ranking, 1 = everyone ranks them the same). Bundles with fewer than 2 complete "
        "participants have none."
    ),
    "bundle-w-entropy": (
        "Each bundle's Kendall's W against the mean Shannon entropy (bits) of its items' "
        "labels: do people agree less on the ranking where they disagree more on each item?"
    ),
    "bundle-decomposition": (
        "The participant × item table of each bundle's complete participants as a two-way "
        "analysis of variance: ICC(2,1) (absolute agreement, participants a random sample), "
        "ICC(3,1) (consistency, participants fixed) and the share of the variance "
        "explained by the participant. A point per bundle; the bar is the mean."
    ),
    "bundle-idiosyncrasy": (
        "For each participant and bundle: Spearman ρ between their labels and the mean of "
        "the other participants' labels of the same items (leave one out). Low or negative: "
        "this person ranks the alternatives their own way."
    ),
}


@dataclass(frozen=True)
class BundleChart:
    """One bundle chart: its key (the figure's file name), title, caption and drawing."""

    key: str
    title: str
    caption: str
    drawing: plots.Drawing


def bundle_charts(report: dict) -> list[BundleChart]:
    """The report's bundle charts that have something to draw, in page order."""
    section = report.get("bundles")
    if not section:
        return []
    minimum = min_p_value_n(report)
    effect = section.get("position_effect")
    entries = section.get("bundles", [])
    people = [entry for person in section.get("participants", []) for entry in person["bundles"]]
    relation = section.get("w_versus_entropy") or {}
    candidates = [
        (
            "bundle-positions",
            "Position within the bundle",
            lambda: (
                plots.position_drawing(effect, position_sentence(effect, minimum), _scale(report))
                if effect
                else None
            ),
        ),
        ("bundle-w", "Concordance per bundle", lambda: plots.concordance_drawing(entries)),
        (
            "bundle-w-entropy",
            "Concordance against disagreement",
            lambda: plots.concordance_entropy_drawing(
                entries, relation_sentence(relation, minimum)
            ),
        ),
        (
            "bundle-decomposition",
            "Individual-specific preferences per bundle",
            lambda: plots.decomposition_drawing(entries),
        ),
        ("bundle-idiosyncrasy", "Idiosyncrasy", lambda: plots.idiosyncrasy_drawing(people)),
    ]
    charts = []
    for key, title, draw in candidates:
        drawing = draw()
        if drawing is not None:
            charts.append(BundleChart(key, title, BUNDLE_CAPTIONS[key], drawing))
    return charts


def _scale(report: dict) -> list[float]:
    """The batch's label values, from the fixed label set an item's counts run over."""
    items = report.get("items") or [{}]
    try:
        return sorted(float(label) for label in items[0].get("counts", {}))
    except ValueError:  # labels that are not numbers: the chart takes the means' range
        return []
