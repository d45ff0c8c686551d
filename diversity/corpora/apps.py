from django.apps import AppConfig


class CorporaConfig(AppConfig):
    """Response pools in the product: imported corpora, their embeddings, the homogeneity
    analyses (``diversity.homogeneity``), their pages, and batches made from them."""

    name = "diversity.corpora"
    label = "corpora"
    verbose_name = "Response pools"
    default_auto_field = "django.db.models.BigAutoField"
    # checked by core's system check: each needs a registered runner
    job_kinds = ("corpus_import", "corpus_embeddings", "corpus_analysis")

    # granted to the staff roles by core.roles (admins hold researchers' too)
    researcher_permissions = (
        "corpora.view_corpus",
        "corpora.add_corpus",
        "corpora.change_corpus",
        "corpora.analyse_corpus",
    )

    def ready(self) -> None:
        from core.jobs.study_types import register_study_type
        from diversity.corpora import pages
        from diversity.corpora.services import (  # noqa: F401  (register the job kinds)
            analysis_parts,
            embedding_jobs,
            imports,
        )
        from diversity.corpora.study import CORPORA

        register_study_type(CORPORA)
        pages.register_extensions()
