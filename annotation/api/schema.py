"""OpenAPI descriptions of our own authentication classes (drf-spectacular extensions)."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension


class WorkerSessionScheme(OpenApiAuthenticationExtension):
    """The crowdworker's session cookie, opened by the entry page ``/work/<slug>/``."""

    target_class = "annotation.api.worker.WorkerSessionAuthentication"
    name = "workerSession"

    def get_security_definition(self, auto_schema):
        return {
            "type": "apiKey",
            "in": "cookie",
            "name": "sessionid",
            "description": "Opened by GET /work/<slug>/; unsafe methods also send X-CSRFToken.",
        }
