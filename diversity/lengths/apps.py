from django.apps import AppConfig


class LengthsConfig(AppConfig):
    """Length statistics of a corpus's responses, a study type (``diversity.lengths.study``)."""

    name = "diversity.lengths"
    label = "lengths"
    verbose_name = "Length statistics"
    # checked by core's system check: each needs a registered runner
    job_kinds = ("length_statistics",)

    def ready(self) -> None:
        from core.jobs.study_types import register_study_type
        from diversity.lengths.study import LENGTHS

        register_study_type(LENGTHS)
