"""Read-only queries of the Genie app."""

from django.db.models import Count, Q

from core.jobs.subject_pages import analysed_at
from diversity.genie.models import GenieSet

__all__ = ["genie_rows"]


def genie_rows() -> list[dict]:
    """Every Genie set with its size and newest finished analysis, by name:
    ``{genie_set, n_judgments, n_llm, n_human, analysed_at}``."""
    sets = list(
        GenieSet.objects.annotate(
            n_judgments=Count("judgments"),
            n_llm=Count("judgments", filter=Q(judgments__source="llm")),
            n_human=Count("judgments", filter=Q(judgments__source="human")),
        )
        .select_related("human_batch")
        .order_by("name")
    )
    finished = analysed_at(GenieSet, sets, "genie_analysis")
    return [
        {
            "genie_set": genie_set,
            "subject": genie_set,
            "n_judgments": genie_set.n_judgments,
            "n_llm": genie_set.n_llm,
            "n_human": genie_set.n_human,
            "analysed_at": finished.get(genie_set.pk),
        }
        for genie_set in sets
    ]
