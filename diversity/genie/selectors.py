"""Read-only queries of the Genie app."""

from django.contrib.contenttypes.models import ContentType
from django.db.models import Count, Q

from core.models import Job
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
    finished = {}
    jobs = Job.objects.filter(
        subject_type=ContentType.objects.get_for_model(GenieSet),
        subject_id__in=[genie_set.pk for genie_set in sets],
        kind="genie_analysis",
        state=Job.State.SUCCEEDED,
    ).order_by("finished_at")
    for subject_id, finished_at in jobs.values_list("subject_id", "finished_at"):
        finished[subject_id] = finished_at  # the newest wins
    return [
        {
            "genie_set": genie_set,
            "n_judgments": genie_set.n_judgments,
            "n_llm": genie_set.n_llm,
            "n_human": genie_set.n_human,
            "analysed_at": finished.get(genie_set.pk),
        }
        for genie_set in sets
    ]
