from django.apps import AppConfig


class GenieConfig(AppConfig):
    """Genie in the product: imported judgment sets, their analyses, pages and human batches.

    The pure Genie code lives beside this app in ``diversity.genie`` (no Django there); this
    app stores what was imported and runs that code on it.
    """

    name = "diversity.genie"
    label = "genie"
    verbose_name = "Genie"
    # checked by core's system check: each needs a registered runner
    job_kinds = ("genie_analysis",)

    # granted to the staff roles by core.roles (admins hold researchers' too)
    researcher_permissions = (
        "genie.view_genieset",
        "genie.add_genieset",
        "genie.analyse_genie",
    )

    def ready(self) -> None:
        from core.jobs.study_types import register_study_type
        from diversity.genie.study import GENIE

        register_study_type(GENIE)
