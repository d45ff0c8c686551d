"""Read-only queries of the census app."""

from django.db.models import Count, Exists, OuterRef

from core.jobs.subject_pages import analysed_at
from diversity.census.models import Census, CensusNorm

__all__ = ["census_rows"]


def census_rows() -> list[dict]:
    """Every census with its size, whether it has norms, and its newest finished analysis.

    ``{census, subject (the census again, as every study type's list reads it), n_replies,
    n_models, n_categories, has_norms, analysed_at}``, by name.
    """
    censuses = list(
        Census.objects.annotate(
            n_replies=Count("answers"),
            n_models=Count("answers__answerer", distinct=True),
            n_categories=Count("answers__category", distinct=True),
            has_norms=Exists(CensusNorm.objects.filter(census=OuterRef("pk"))),
        )
        .prefetch_related("files")
        .order_by("name")
    )
    finished = analysed_at(Census, censuses, "census_analysis")
    return [
        {
            "census": census,
            "subject": census,
            "n_replies": census.n_replies,
            "n_models": census.n_models,
            "n_categories": census.n_categories,
            "has_norms": census.has_norms,
            "analysed_at": finished.get(census.pk),
        }
        for census in censuses
    ]
