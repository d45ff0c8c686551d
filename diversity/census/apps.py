from django.apps import AppConfig


class CensusConfig(AppConfig):
    """The One-Word Census in the product: imported censuses, their analyses and pages.

    The pure census rules live beside this app in ``diversity.census`` (no Django there);
    this app stores what was imported and runs those rules on it.
    """

    name = "diversity.census"
    label = "census"
    verbose_name = "One-Word Census"
    # checked by core's system check: each needs a registered runner
    job_kinds = ("census_analysis",)

    # granted to the staff roles by core.roles (admins hold researchers' too)
    researcher_permissions = (
        "census.view_census",
        "census.add_census",
        "census.analyse_census",
    )

    def ready(self) -> None:
        from core.jobs.study_types import register_study_type
        from diversity.census.study import CENSUS

        register_study_type(CENSUS)
