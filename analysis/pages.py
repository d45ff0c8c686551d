"""What the analysis app adds to the batch pages (through ``core.extensions``):

* an **Analysis** tab (the report page);
* a **Model scores** panel on the batch overview (score upload, link to the report);
* a **Crowd ρ** column in the annotators table: each annotator's Spearman with the
  leave-one-out crowd, from the newest finished analysis (computing it needs every
  counted label of the batch, so the table shows the last analysis's figures and says
  when it ran, rather than recomputing on every view);
* a **Competence** column beside it: each annotator's MACE competence from the same
  analysis (Dawid–Skene's in its tooltip text), sortable, with the models' assumption of one
  true label per item stated in the page's note, and the batch's competence review list
  (``review_lowest_competence``) as that analysis made it — a list to read, never an
  exclusion.
"""

from analysis.access import can_analyse
from analysis.services.analyses import latest_report
from core.extensions import Column, Panel, Tab, register_column, register_panel, register_tab


def _score_panel_context(request, batch, state: dict) -> dict:
    return {
        "score_problems": state.get("problems", []),
        "score_upload_name": state.get("upload_name", ""),
    }


def _crowd_spearman(batch) -> dict[str, str]:
    found = latest_report(batch)
    if found is None:
        return {}
    _, report = found
    return {
        entry["annotator"]: f"{entry['crowd_spearman']:.2f}"
        for entry in report.get("annotators", [])
        if entry.get("crowd_spearman") is not None
    }


def _analysed_at(batch) -> str:
    found = latest_report(batch)
    return f"{found[0].finished_at:%Y-%m-%d %H:%M} UTC" if found else ""


def _crowd_title(batch) -> str:
    when = _analysed_at(batch)
    title = "Spearman between this annotator's labels and the mean of the others on the same items"
    return f"{title}, from the analysis of {when}" if when else title


def _crowd_note(batch) -> str:
    when = _analysed_at(batch)
    source = f"from the analysis of {when}" if when else "run an analysis to see it"
    return (
        f"Crowd ρ is each annotator's agreement with the others ({source}): low values "
        "flag careless work, or a consistent minority view."
    )


def _competence(batch) -> dict[str, str]:
    found = latest_report(batch)
    if found is None:
        return {}
    _, report = found
    return {
        entry["annotator"]: f"{entry['mace_competence']:.2f}"
        for entry in (report.get("competence") or {}).get("annotators", [])
        if entry.get("mace_competence") is not None
    }


def _competence_title(batch) -> str:
    return (
        "MACE competence: the estimated share of this annotator's labels that are not guesses "
        "(Hovy et al. 2013), from the newest analysis; it assumes one true label per item"
    )


def _competence_note(batch) -> str:
    note = (
        "Competence (MACE, Dawid–Skene in the report) assumes one true label per item: on "
        "open-ended items it measures consistency with the majority, not correctness, so a "
        "low value is a reason to look, never to exclude."
    )
    return f"{note} {_review_note(batch)}".rstrip()


def _review_note(batch) -> str:
    """The batch's competence review list (``review_lowest_competence``) as the newest
    analysis made it, and what to do when the setting changed since."""
    found = latest_report(batch)
    review = ((found[1].get("competence") or {}).get("review") or {}) if found else {}
    asked = batch.review_lowest_competence
    lowest = review.get("lowest", []) if "size" in review else []
    text = ""
    if lowest:
        text = (
            f"For review (the {len(lowest)} of lowest competence with at least "
            f"{review['min_labels']} labels; nobody is excluded by it): {', '.join(lowest)}."
        )
    if found and asked != review.get("size"):
        wanted = f"the {asked} of lowest competence" if asked else "no review list"
        text += f" The batch now asks for {wanted}: run the analysis again to update it."
    return text.strip()


def register_extensions() -> None:
    register_tab("batch", Tab("Analysis", "manage-report", can_analyse, order=40))
    register_panel(
        "batch",
        Panel("scores", "analysis/panels/scores.html", _score_panel_context, can_analyse, 50),
    )
    register_column(
        "annotators",
        Column(
            "crowd_spearman",
            "Crowd\u00a0ρ",
            _crowd_spearman,
            title=_crowd_title,
            note=_crowd_note,
            order=50,
            sortable=True,
        ),
    )
    register_column(
        "annotators",
        Column(
            "competence",
            "Competence",
            _competence,
            title=_competence_title,
            note=_competence_note,
            order=55,
            sortable=True,
        ),
    )
