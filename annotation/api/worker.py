"""The crowdworker JSON API used by the rating page (API.md, "Crowdworker JSON API")."""

import dataclasses
import uuid

from django.shortcuts import get_object_or_404
from django.utils import timezone
from django.utils.translation import gettext, gettext_lazy
from drf_spectacular.utils import extend_schema
from rest_framework import exceptions, serializers, status
from rest_framework.authentication import SessionAuthentication
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.permissions import BasePermission
from rest_framework.renderers import JSONRenderer
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation import selectors, worker_session
from annotation.models import Annotator, Batch, Participation
from annotation.services import sql
from annotation.services.admission import completion
from annotation.services.bundles import bundle_progress
from annotation.services.labelling import submit_label
from annotation.services.leases import no_such_assignment
from annotation.services.leasing import (
    LeaseOutcome,
    NoWorkReason,
    extend_lease,
    lease_for_worker,
)
from core.api.parsers import JSONParser
from core.errors import InvalidInput, NotFound


class WorkerPrincipal:
    """Stands in for ``request.user`` when a crowdworker's session calls the API."""

    is_authenticated = True
    is_staff = False
    is_superuser = False

    def __init__(self, session):
        self.session = session

    def has_perm(self, perm, obj=None) -> bool:
        return False  # a crowdworker holds no staff permission


class WorkerSessionAuthentication(SessionAuthentication):
    """A browser session opened by the entry page; CSRF is enforced as for staff sessions."""

    def authenticate(self, request):
        session = request._request.session
        if not worker_session.annotator_pks(session):
            return None
        self.enforce_csrf(request)
        return (WorkerPrincipal(session), None)

    def enforce_csrf(self, request):
        try:
            super().enforce_csrf(request)
        except exceptions.PermissionDenied as refused:
            # DRF's "CSRF Failed: …" is for developers; the page shows this to a participant
            raise exceptions.PermissionDenied(
                gettext("This page's security check failed. Reload the page and try again.")
            ) from refused


class IsWorker(BasePermission):
    message = gettext_lazy("Open the study link from your crowd platform first.")

    def has_permission(self, request, view):
        return isinstance(request.user, WorkerPrincipal)


class JsonOnly(DefaultContentNegotiation):
    """The rating page's calls are answered in JSON, the only renderer they have: choosing
    it from the ``Accept`` header on each of the busiest requests bought nothing. (A body
    is still matched to the JSON parser by its type: another type is a 415.)"""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class WorkerAPIView(APIView):
    authentication_classes = [WorkerSessionAuthentication]
    permission_classes = [IsWorker]
    content_negotiation_class = JsonOnly
    parser_classes = [JSONParser]
    renderer_classes = [JSONRenderer]

    def permission_denied(self, request, message=None, code=None):
        """A browser without the entry page's session reads how to get one, in its
        language (DRF would answer "Authentication credentials were not provided.")."""
        raise exceptions.PermissionDenied(message or IsWorker.message, code=code)


class NextItemResponse(serializers.Serializer):
    assignment = serializers.CharField(allow_null=True)
    expires_at = serializers.DateTimeField(required=False)
    item = serializers.DictField(required=False)
    progress = serializers.DictField()
    reason = serializers.CharField(required=False)
    retry_after = serializers.IntegerField(allow_null=True, required=False)
    wait_seconds = serializers.IntegerField(required=False)
    bundle = serializers.DictField(
        required=False,
        help_text="In a bundled batch: position (from 1) and size of this participant's "
        "bundle, and partial (only the bundle's remaining items were given).",
    )
    ending = serializers.ChoiceField(
        choices=["completed", "screened_out", "full", "thanks", "departed"], required=False
    )
    completion_code = serializers.CharField(allow_null=True, required=False)
    completion_url = serializers.CharField(allow_null=True, required=False)
    return_study = serializers.BooleanField(required=False)


class NextItemView(WorkerAPIView):
    """Lease the next item, or say why there is none (with the completion code)."""

    def get_serializer(self, *args, **kwargs):  # for the schema only
        return NextItemResponse(*args, **kwargs)

    def post(self, request, slug: str):
        participation, outcome = _work(request, slug)
        batch = participation.batch
        progress = {
            "done": outcome.done,
            "quota": outcome.quota,
            "total_items": selectors.regular_item_count(batch),
        }
        if outcome.assignment is None:
            if outcome.reason == NoWorkReason.QUOTA:  # all this participant may do: done
                progress["quota"] = min(outcome.done, outcome.quota or outcome.done)
            body = {
                "assignment": None,
                "reason": outcome.reason,
                "retry_after": outcome.retry_after,
                "progress": progress,
            }
            if outcome.reason in (NoWorkReason.WAIT, NoWorkReason.BUSY):
                # how long the page waits in all before it shows the ending below
                body["wait_seconds"] = batch.wait_for_release_seconds
            ending = completion(batch, participation, outcome.done)
            body.update(
                {
                    "ending": ending.ending,
                    "completion_code": ending.code,
                    "completion_url": ending.url,
                    "return_study": ending.return_study,
                    "mturk_submit": mturk_submission(participation)
                    if ending.code and ending.ending != "screened_out"
                    else None,
                }
            )
            return Response(body)
        assignment = outcome.assignment
        body = {
            "assignment": str(assignment.pk),
            "expires_at": assignment.expires_at.isoformat(),
            "heartbeat_seconds": heartbeat_interval(batch),
            "item": selectors.lease_payload(batch, assignment),
            "progress": progress,
        }
        in_bundle = bundle_progress(assignment)
        if in_bundle is not None:
            body["bundle"] = dataclasses.asdict(in_bundle)
            if progress["quota"] is None and batch.bundles_per_participant == 1:
                # one bundle each: the participant's whole task is this bundle's items
                before = outcome.done - (in_bundle.position - 1)
                progress["quota"] = before + in_bundle.size
        elif progress["quota"] is None and batch.bundles_per_participant == 1 and outcome.done:
            # a check or repeat after their one bundle: the bar stays full ("5 / 5")
            progress["quota"] = outcome.done
        return Response(body)


def _work(request, slug: str) -> tuple[Participation, LeaseOutcome]:
    """This session's participation in the batch (its batch loaded) and what
    ``lease_for_worker`` hands it; a 404 when the session has not entered the batch."""
    annotator_pk = worker_session.annotator_for_batch(request.session, slug)
    browser_key = worker_session.held_browser_key(request.session, slug)
    found = (
        lease_for_worker(slug, annotator_pk, browser_key, timezone.now())
        if annotator_pk is not None
        else None
    )
    if found is None:
        get_object_or_404(Batch, slug=slug)
        raise NotFound(gettext("You have not entered this batch; open its study link first."))
    return found


# The page extends its lease this often while it is visible (at most every 30 s, and
# well within the lease so that one missed beat does not lose it).
HEARTBEAT_SECONDS = 30


def heartbeat_interval(batch: Batch) -> int:
    return max(1, min(HEARTBEAT_SECONDS, batch.lease_seconds // 3))


class HeartbeatView(WorkerAPIView):
    """Extend the lease while the page is visible (up to the batch's cap)."""

    @extend_schema(
        request=None,
        responses={
            (200, "application/json"): {
                "type": "object",
                "properties": {"expires_at": {"type": "string", "format": "date-time"}},
            }
        },
    )
    def post(self, request, assignment_id: str):
        annotators = Annotator.objects.filter(pk__in=worker_session.annotator_pks(request.session))
        last_error = no_such_assignment()
        for annotator in annotators:
            try:
                assignment = extend_lease(annotator, _assignment_uuid(assignment_id))
            except NotFound as missing:
                last_error = missing
                continue
            return Response({"expires_at": assignment.expires_at.isoformat()})
        raise last_error


def _assignment_uuid(raw: str) -> uuid.UUID:
    try:
        return uuid.UUID(str(raw))
    except (ValueError, AttributeError, TypeError) as bad:
        raise no_such_assignment() from bad


# MTurk's ExternalQuestion passes turkSubmitTo; only its own hosts are trusted as targets.
MTURK_SUBMIT_HOSTS = {"https://www.mturk.com", "https://workersandbox.mturk.com"}


def mturk_submission(participation: Participation) -> dict | None:
    """Where an MTurk worker's page must POST to finish the HIT, or None (not MTurk)."""
    params = participation.entry_params or {}
    host = (params.get("turkSubmitTo") or "").rstrip("/")
    assignment_id = params.get("assignmentId") or ""
    if host not in MTURK_SUBMIT_HOSTS or not assignment_id:
        return None
    return {"url": f"{host}/mturk/externalSubmit", "assignmentId": assignment_id}


# The body is validated by the services (the batch's kind checks ``value``,
# ``submit_label`` the duration); this only describes it in the OpenAPI schema.
LABEL_REQUEST_SCHEMA = {
    "type": "object",
    "properties": {
        "value": {
            "oneOf": [{"type": "integer"}, {"type": "string"}],
            "description": "the label: an integer for kinds that choose, a string for "
            "kinds that write (KINDS.md)",
        },
        "duration_ms": {"type": "integer", "minimum": 0, "nullable": True},
        "cant_judge": {
            "type": "boolean",
            "description": "true instead of a value: “I can't judge this” (batches with "
            "allow_cant_judge); stored as cant_judge, never counted, the slot goes back",
        },
        "comment": {
            "type": "string",
            "maxLength": 2000,
            "description": "the annotator's note on the item (batches with a comment box)",
        },
    },
}


def _session_annotators(session) -> list[Annotator]:
    """The annotators this browser session stands for, as references by primary key."""
    return [
        sql.stored(Annotator, {"id": pk}) for pk in sorted(worker_session.annotator_pks(session))
    ]


class SubmitLabelView(WorkerAPIView):
    """Submit the label of an assignment; a retry with the same value is harmless."""

    @extend_schema(
        request={"application/json": LABEL_REQUEST_SCHEMA},
        responses={
            (201, "application/json"): {
                "type": "object",
                "properties": {
                    "status": {"enum": ["counted", "surplus", "excluded", "cant_judge"]}
                },
            }
        },
    )
    def post(self, request, assignment_id: str):
        body = request.data
        if not isinstance(body, dict):
            raise InvalidInput("body", "must be a JSON object with 'value' and 'duration_ms'")
        if "value" not in body and body.get("cant_judge") is not True:
            raise InvalidInput("value", "is required (or cant_judge: true, where offered)")
        last_error = no_such_assignment()
        # a session may hold a few batches' annotators; the assignment names its own, and
        # submit_label finds it only for that one (no query for the annotators themselves)
        for annotator in _session_annotators(request.session):
            try:
                outcome = submit_label(
                    annotator,
                    assignment_id,
                    body.get("value"),
                    body.get("duration_ms"),
                    browser_keys=worker_session.browser_keys(request.session),
                    cant_judge=body.get("cant_judge"),
                    comment=body.get("comment"),
                    batch_slug=worker_session.only_batch_of(request.session, annotator.pk),
                )
            except NotFound as missing:
                last_error = missing
                continue
            code = status.HTTP_201_CREATED if outcome.created else status.HTTP_200_OK
            return Response({"status": outcome.status}, status=code)
        raise last_error
