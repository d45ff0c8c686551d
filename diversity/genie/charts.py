"""The charts of the Genie set page, drawn from the report alone: the analysis job draws
them once and stores them (``core.jobs.stored_charts``), so the page's first view does not
wait for matplotlib."""

from diversity.genie import plots, presentation


def page_charts(report: dict) -> list[dict]:
    """The report's charts as inline SVG (``key``, ``title``, ``caption``, ``svg``), in
    page order: drawn by the analysis job, which stores them for the page."""
    features = report.get("features", [])
    scores = report.get("scores", {})
    level = report["settings"]["ci_level"]
    documents = [entry for source in scores.values() if source for entry in source["per_document"]]
    colours = plots.document_colours(list({plots.document_label(e): e for e in documents}.values()))
    candidates = []
    for source in ("llm", "human"):
        if scores.get(source):
            candidates.append(
                (
                    f"profiles-{source}",
                    f"Novelty profiles, {plots.SOURCE_NAMES[source]}",
                    "One line per document. Q(doc, q) = 1 − mean over the population of "
                    "(sim − 1) / 3 for question q; Genie(doc, feature) = mean of Q over the "
                    "feature's questions. A pair with a missing answer is left out.",
                    lambda source=source: plots.novelty_profiles(
                        source, scores[source]["per_document"], features, colours
                    ),
                )
            )
    for source in ("llm", "human"):
        for by in ("model", "method"):
            rows = [
                row
                for row in presentation.comparison_rows(report)
                if row["source"] == source and row["by"] == by
            ]
            if any(row["versus"] for row in rows):
                title = f"Differences between {by}s, {plots.SOURCE_NAMES[source]}"
                candidates.append(
                    (
                        f"forest-{source}-{by}",
                        title,
                        "Each difference of two groups' mean novelty (first − second), "
                        f"with its {level:.0%} two-stage bootstrap interval (prompts, then "
                        "documents within prompts); a paired permutation p over prompts is "
                        "in the table.",
                        lambda rows=rows, title=title: plots.difference_forest(rows, title),
                    )
                )
    candidates.append(
        (
            "features",
            "Novelty per feature",
            f"Mean of Genie(doc, feature) over the documents, with its {level:.0%} percentile "
            "bootstrap interval (documents resampled).",
            lambda: plots.feature_summary_chart(scores, features),
        )
    )
    charts = []
    for key, title, caption, draw in candidates:
        svg = draw()
        if svg is not None:
            charts.append({"key": key, "title": title, "caption": caption, "svg": svg})
    return charts
