from django.apps import AppConfig


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"
    # checked by core's system check: each needs a registered runner
    job_kinds = ("export", "import")

    def ready(self) -> None:
        import annotation.api.schema  # noqa: F401  (describes the worker session in OpenAPI)
        import annotation.checks  # noqa: F401  (registers the TASK_KINDS check)
        import annotation.services.export_jobs  # noqa: F401  (registers the "export" job kind)
        import annotation.services.import_jobs  # noqa: F401  (registers the "import" job kind)
        from annotation import access, pages

        access.grant_permissions()
        pages.register_extensions()
