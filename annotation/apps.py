from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"
    # checked by core's system check: each needs a registered runner
    job_kinds = ("export", "import")

    # granted to the staff roles by core.roles (admins hold researchers' too)
    researcher_permissions = (
        "annotation.view_batch",
        "annotation.view_item",
        "annotation.view_label",
        "annotation.export_batch",
        "core.view_job",
        "core.add_job",
        "core.view_auditevent",
    )
    admin_permissions = (
        "annotation.add_batch",
        "annotation.change_batch",
        "annotation.add_item",
        "annotation.view_annotator",
        "annotation.view_participation",
        "annotation.change_participation",
        "annotation.view_assignment",
        "annotation.view_query",
        "annotation.view_response",
        "annotation.manage_annotators",
    )

    def ready(self) -> None:
        import annotation.api.schema  # noqa: F401  (describes the worker session in OpenAPI)
        import annotation.checks  # noqa: F401  (registers the TASK_KINDS check)
        import annotation.services.export_jobs  # noqa: F401  (registers the "export" job kind)
        import annotation.services.import_jobs  # noqa: F401  (registers the "import" job kind)
        from annotation import pages

        pages.register_extensions()
