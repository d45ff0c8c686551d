"""The charts of the census page, drawn from the report alone: the analysis job draws
them once and stores them (``core.jobs.stored_charts``), so the page's first view does not
wait for matplotlib."""

from diversity.census import plots, presentation


def page_charts(report: dict) -> list[dict]:
    """The report's charts as inline SVG (``key``, ``title``, ``caption``, ``svg``), in
    page order: drawn by the analysis job, which stores them for the page."""
    level = report["settings"]["ci_level"]
    more = [c for c in presentation.comparisons(report) if c["key"] in ("computed", "batch")]
    concentrated = " ".join(
        f"{c['title']}: the model field is more concentrated in {c['n_more']} of "
        f"{c['n_categories']} shared categories."
        for c in more
    )
    candidates = [
        (
            "ranking",
            "Models ranked by surprisal",
            "Surprisal of an answer = −log₂((n + 1) / (N + V)), n = how often the other models "
            "gave it in that category, N = their answers, V = distinct answers of the category "
            "among them and this model; a model's value is the mean over all its scored answers. "
            f"Bars: {level:.0%} bootstrap interval over its categories (percentiles 5 and 95).",
            "wide",
            lambda: plots.surprisal_ranking(report.get("per_model", {}), level),
        ),
        (
            "scatter",
            "Surprisal × self-distinctness",
            "Self-distinctness = mean over categories of (distinct answers / answers) of the "
            "model's own runs. Dashed lines: the medians over the models; above a median is "
            "high. Explorer: both high; true-contrarian: surprisal only; consensus-sampler: "
            "self-distinctness only; consensus-fixed: neither.",
            "wide",
            lambda: plots.type_scatter(report.get("per_model", {}), report.get("medians", {})),
        ),
        (
            "modal-share",
            "Modal share per category",
            "Modal share = count of the most frequent answer / all answers of the category "
            "(first answers for the human norms). "
            + (concentrated or "No human norms to compare with in this report."),
            "wide",
            lambda: plots.modal_share_bars(
                presentation.bar_rows(report), presentation.bar_series(report)
            ),
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
