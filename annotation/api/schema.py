"""OpenAPI descriptions that live outside the views they describe (drf-spectacular
extensions): our own authentication class, and the crowdworker operations' docs."""

from drf_spectacular.extensions import OpenApiAuthenticationExtension, OpenApiViewExtension
from drf_spectacular.utils import extend_schema, extend_schema_view


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


# --------------------------------------------------------------------------- worker docs
# The crowdworker views keep their request and response shapes next to their code
# (annotation/api/worker.py); their tag, summary and description are added here, by
# replacing the view class the schema generator sees with a documented subclass.

WORKER_OPERATIONS = {
    "annotation.api.worker.NextItemView": {
        "summary": "Lease the next item (crowdworker)",
        "description": (
            "For the worker's browser session opened by `GET /work/<slug>/`. Answers the "
            "annotator's open lease if they hold one, else leases a new item: the item to "
            "show, its expiry and the worker's progress. When nothing is left for this "
            "annotator, `assignment` is null with the `reason` and the completion code and "
            "URL. 403 while the batch is not live."
        ),
    },
    "annotation.api.worker.HeartbeatView": {
        "summary": "Keep a lease alive (crowdworker)",
        "description": (
            "Sent by the rating page while the item is on screen: extends the lease, up to "
            "the batch's cap, and answers the new expiry. 404 for an assignment that is not "
            "this worker's."
        ),
    },
    "annotation.api.worker.SubmitLabelView": {
        "summary": "Submit a label (crowdworker)",
        "description": (
            "The label of a leased item: 201 `counted` (or `surplus` when the lease had "
            "expired and the item filled up meanwhile) on the first submission, 200 with the "
            "same body for an identical retry, 409 for a different value, 400 for a value "
            "outside the label set (naming the field), 404 for an assignment that is not "
            "this worker's."
        ),
    },
}


def _documented_worker_view(view: type, documentation: dict) -> type:
    documented = type(view.__name__, (view,), {"__module__": view.__module__})
    return extend_schema_view(post=extend_schema(tags=["worker"], **documentation))(documented)


class NextItemDocs(OpenApiViewExtension):
    target_class = "annotation.api.worker.NextItemView"
    documentation = WORKER_OPERATIONS[target_class]

    def view_replacement(self):
        return _documented_worker_view(self.target, self.documentation)


class HeartbeatDocs(OpenApiViewExtension):
    target_class = "annotation.api.worker.HeartbeatView"
    optional = True  # the crowdworker API may not have it
    documentation = WORKER_OPERATIONS[target_class]

    def view_replacement(self):
        return _documented_worker_view(self.target, self.documentation)


class SubmitLabelDocs(OpenApiViewExtension):
    target_class = "annotation.api.worker.SubmitLabelView"
    documentation = WORKER_OPERATIONS[target_class]

    def view_replacement(self):
        return _documented_worker_view(self.target, self.documentation)
