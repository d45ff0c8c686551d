from django.apps import AppConfig
from django.db.models.signals import post_migrate


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self) -> None:
        import annotation.api.schema  # noqa: F401  (describes the worker session in OpenAPI)
        import annotation.services.export_jobs  # noqa: F401  (registers the "export" job runner)
        import annotation.services.import_jobs  # noqa: F401  (registers the "import" job runner)
        from annotation.roles import ensure_roles

        post_migrate.connect(ensure_roles, dispatch_uid="annotation.ensure_roles")
