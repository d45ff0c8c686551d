"""The crowd platforms in the JSON API, under ``/api/v1/batches/<slug>/crowd/``.

Reads (proposals, bonus preview, places plan, fair pay) for researchers and admins;
changes on the platform (sync, apply, pay, set places) for admins only. The same
services as the Review tab and the ``prolific`` / ``mturk`` commands. A refusal by the
platform answers 409 with its message; no answer from it, 503 (``Retry-After: 30``).
"""

from contextlib import contextmanager
from decimal import Decimal

from django.shortcuts import get_object_or_404
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.response import Response
from rest_framework.views import APIView

from annotation.models import Batch
from core.access import permission_class
from core.api.shapes import ErrorResponse, error_responses
from core.audit import Actor
from core.errors import Conflict, InvalidInput, TemporarilyUnavailable
from crowd import access
from crowd.models import Platform
from crowd.services import bonuses, mturk, places
from crowd.services.fairpay import fair_pay
from crowd.services.prolific_client import Ambiguous, NotConfigured, ProlificClient, ProlificError
from crowd.services.review import apply_prolific, propose
from crowd.services.submissions import sync_prolific

CanAct = permission_class(access.can_act, read_check=access.can_view_review)
UNAVAILABLE = {
    503: OpenApiResponse(ErrorResponse, description="The platform did not answer; try again.")
}
PLATFORM = OpenApiParameter(
    "platform", str, enum=["prolific", "mturk"], description="Default: prolific."
)


@contextmanager
def platform_errors():
    from botocore.exceptions import BotoCoreError, ClientError

    try:
        yield
    except (NotConfigured, ProlificError, ClientError) as refused:
        raise Conflict(f"platform: {refused}") from refused
    except (Ambiguous, BotoCoreError) as lost:
        raise TemporarilyUnavailable(f"platform: {lost}", retry_after=30) from lost


def _batch(slug: str) -> Batch:
    return get_object_or_404(Batch, slug=slug)


def _asked(body_class, data, slug: str) -> tuple[dict, Batch, str]:
    """The checked settings of a request (its body or query), the batch, the platform."""
    asked = body_class(data=data)
    asked.is_valid(raise_exception=True)
    return asked.validated_data, _batch(slug), asked.validated_data["platform"]


def _platform(value) -> str:
    value = value or Platform.PROLIFIC
    if value not in Platform.values:
        raise InvalidInput("platform", "is prolific or mturk")
    return value


def _client(batch: Batch, platform: str):
    if platform == Platform.PROLIFIC:
        if not batch.prolific_study_id:
            raise Conflict("prolific_study_id: the batch has none; set it first")
        return ProlificClient()
    return mturk.make_client()


def _sync(batch, platform, client, actor):
    if platform == Platform.PROLIFIC:
        return sync_prolific(batch, client, actor=actor)
    return mturk.sync(batch, client, actor=actor)


class ProposalResponse(serializers.Serializer):
    submission_id = serializers.CharField()
    participant_id = serializers.CharField()
    annotator = serializers.CharField(help_text="Pseudonym; empty when never seen here.")
    status = serializers.CharField()
    items_done = serializers.IntegerField()
    checks_failed = serializers.IntegerField()
    action = serializers.ChoiceField(choices=["approve", "screen_out", "reject", "manual"])
    reason = serializers.CharField()
    state = serializers.CharField(help_text="sent, done, failed, or empty: nothing sent yet.")


class ReviewResponse(serializers.Serializer):
    proposals = ProposalResponse(many=True)


class ReviewRequest(serializers.Serializer):
    platform = serializers.ChoiceField(choices=Platform.values, default=Platform.PROLIFIC)
    reject_failed_checks = serializers.BooleanField(default=False)


class ReviewOutcome(serializers.Serializer):
    approved = serializers.IntegerField()
    screened_out = serializers.IntegerField(required=False)
    rejected = serializers.IntegerField()
    refused = serializers.IntegerField()
    unknown = serializers.IntegerField(help_text="No answer: the next sync settles them.")


class ReviewView(APIView):
    permission_classes = [CanAct]

    @extend_schema(
        tags=["crowd"],
        summary="Proposed review of the submissions awaiting review",
        description=(
            "As last synced. `reject_failed_checks=1`: propose rejection after two failed "
            "attention checks."
        ),
        parameters=[PLATFORM, OpenApiParameter("reject_failed_checks", bool)],
        responses={200: ReviewResponse, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request, slug: str):
        platform = _platform(request.query_params.get("platform"))
        reject = request.query_params.get("reject_failed_checks") in ("1", "true")
        proposals = propose(_batch(slug), platform, reject_failed_checks=reject)
        return Response({"proposals": [ProposalResponse(p).data for p in proposals]})

    @extend_schema(
        tags=["crowd"],
        summary="Apply the proposed review on the platform",
        description="Syncs, then approves, screens out and rejects as proposed; never twice.",
        request=ReviewRequest,
        responses={200: ReviewOutcome, **error_responses(400, 401, 403, 404, 409), **UNAVAILABLE},
    )
    def post(self, request, slug: str):
        asked, batch, platform = _asked(ReviewRequest, request.data, slug)
        reject = asked["reject_failed_checks"]
        with platform_errors():
            client = _client(batch, platform)
            apply = apply_prolific if platform == Platform.PROLIFIC else mturk.apply_review
            outcome = apply(
                batch, client, actor=Actor.of(request.user), reject_failed_checks=reject
            )
        return Response(outcome)


class SyncRequest(serializers.Serializer):
    platform = serializers.ChoiceField(choices=Platform.values, default=Platform.PROLIFIC)


class SyncResponse(serializers.Serializer):
    released = serializers.IntegerField(help_text="Leases given back at once.")
    submissions = serializers.IntegerField(required=False, help_text="Prolific.")
    assignments = serializers.IntegerField(required=False, help_text="MTurk.")
    statuses = serializers.DictField(
        child=serializers.IntegerField(), required=False, help_text="Prolific: count by status."
    )


class SyncView(APIView):
    permission_classes = [permission_class(access.can_act)]

    @extend_schema(
        tags=["crowd"],
        summary="Sync the submissions' statuses from the platform",
        description="Returned, timed-out and rejected participants give back their open lease.",
        request=SyncRequest,
        responses={
            200: SyncResponse,
            **error_responses(400, 401, 403, 404, 409),
            **UNAVAILABLE,
        },
    )
    def post(self, request, slug: str):
        asked, batch, platform = _asked(SyncRequest, request.data, slug)
        with platform_errors():
            summary = _sync(batch, platform, _client(batch, platform), Actor.of(request.user))
        return Response(summary)


class BonusRequest(serializers.Serializer):
    platform = serializers.ChoiceField(choices=Platform.values, default=Platform.PROLIFIC)
    per_item = serializers.DecimalField(max_digits=10, decimal_places=2, required=False)
    top_up_hourly = serializers.DecimalField(max_digits=10, decimal_places=2, required=False)

    def validate(self, data):
        if ("per_item" in data) == ("top_up_hourly" in data):
            raise serializers.ValidationError({"per_item": "give per_item or top_up_hourly"})
        return data


class BonusRowResponse(serializers.Serializer):
    participant_id = serializers.CharField()
    annotator = serializers.CharField()
    paid_labels = serializers.IntegerField()
    active_ms = serializers.IntegerField()
    earned = serializers.DecimalField(max_digits=10, decimal_places=2)
    already = serializers.DecimalField(max_digits=10, decimal_places=2)
    owed = serializers.DecimalField(max_digits=10, decimal_places=2)


class BonusPreview(serializers.Serializer):
    rows = BonusRowResponse(many=True)
    total = serializers.DecimalField(max_digits=12, decimal_places=2)
    run = serializers.DictField(allow_null=True, help_text="The run paid (POST), if any.")


def _basis(data) -> tuple[str, Decimal]:
    if "per_item" in data:
        return "per_item", data["per_item"]
    return "top_up_hourly", data["top_up_hourly"]


class BonusView(APIView):
    permission_classes = [CanAct]

    @extend_schema(
        tags=["crowd"],
        summary="Preview the bonuses owed",
        description=(
            "Each participant's paid labels, active time, what they earned, what was already "
            "paid and what is owed, with the total; nothing is paid. Give per_item or "
            'top_up_hourly (SPEC.md, "Crowd platforms").'
        ),
        parameters=[
            PLATFORM,
            OpenApiParameter("per_item", str),
            OpenApiParameter("top_up_hourly", str),
        ],
        responses={200: BonusPreview, **error_responses(400, 401, 403, 404)},
    )
    def get(self, request, slug: str):
        asked, batch, platform = _asked(BonusRequest, request.query_params.dict(), slug)
        basis, rate = _basis(asked)
        rows = bonuses.compute(batch, platform, basis, rate)
        return Response(_preview(rows, None))

    @extend_schema(
        tags=["crowd"],
        summary="Pay the bonuses owed, once",
        description="Syncs first. A run whose outcome is unknown answers 409 until resolved.",
        request=BonusRequest,
        responses={200: BonusPreview, **error_responses(400, 401, 403, 404, 409), **UNAVAILABLE},
    )
    def post(self, request, slug: str):
        asked, batch, platform = _asked(BonusRequest, request.data, slug)
        basis, rate = _basis(asked)
        actor = Actor.of(request.user)
        with platform_errors():
            client = _client(batch, platform)
            _sync(batch, platform, client, actor)
            rows, run = bonuses.pay_owed(batch, platform, basis, rate, client=client, actor=actor)
        return Response(_preview(rows, run))


def _preview(rows, run) -> dict:
    return {
        "rows": [BonusRowResponse(row).data for row in rows],
        "total": f"{sum((row.owed for row in rows), Decimal(0)):.2f}",
        "run": None
        if run is None
        else {"id": run.pk, "state": run.state, "detail": run.detail, "remote_id": run.remote_id},
    }


class PlacesResponse(serializers.Serializer):
    remaining_slots = serializers.IntegerField()
    per_participant = serializers.FloatField(allow_null=True)
    active = serializers.IntegerField()
    taken = serializers.IntegerField()
    needed = serializers.IntegerField(allow_null=True)
    total = serializers.IntegerField(allow_null=True)
    why = serializers.CharField()
    study_should_be = serializers.CharField()
    applied = serializers.DictField(allow_null=True)


class PlacesView(APIView):
    permission_classes = [CanAct]

    @extend_schema(
        tags=["crowd"],
        summary="The Prolific places the batch needs",
        description=(
            "Remaining slots over items per participant (quota or measured median) plus the "
            "margin, as last synced, and whether the study should be active or paused."
        ),
        responses={200: PlacesResponse, **error_responses(401, 403, 404)},
    )
    def get(self, request, slug: str):
        batch = _batch(slug)
        return Response(_places(batch, None))

    @extend_schema(
        tags=["crowd"],
        summary="Set the Prolific study's places; pause or resume it with the batch",
        description=(
            "Syncs, then sets total_available_places to what the batch needs (never below "
            "the places taken) and pauses or starts the study to follow the batch."
        ),
        request=None,
        responses={200: PlacesResponse, **error_responses(401, 403, 404, 409), **UNAVAILABLE},
    )
    def post(self, request, slug: str):
        batch, actor = _batch(slug), Actor.of(request.user)
        with platform_errors():
            client = _client(batch, Platform.PROLIFIC)
            sync_prolific(batch, client, actor=actor)
            applied = places.follow_batch(batch, client, actor=actor, places=True)
        return Response(_places(batch, applied))


def _places(batch, applied) -> dict:
    plan = places.plan_places(batch)
    return {
        **{name: getattr(plan, name) for name in PlacesResponse().fields if hasattr(plan, name)},
        "per_participant_source": plan.per_participant_source,
        "study_should_be": places.desired_study_status(batch),
        "applied": applied,
    }


class FairPayResponse(serializers.Serializer):
    participants = serializers.IntegerField()
    median_active_seconds = serializers.FloatField(allow_null=True)
    reward = serializers.DecimalField(max_digits=10, decimal_places=2, allow_null=True)
    currency = serializers.CharField()
    hourly = serializers.DecimalField(max_digits=10, decimal_places=2, allow_null=True)
    minimum = serializers.DecimalField(max_digits=10, decimal_places=2, allow_null=True)
    recommended = serializers.DecimalField(max_digits=10, decimal_places=2, allow_null=True)
    verdict = serializers.ChoiceField(
        choices=["below_minimum", "below_recommended", "fair", "unknown"]
    )


class FairPayView(APIView):
    permission_classes = [permission_class(access.can_view_review)]

    @extend_schema(
        tags=["crowd"],
        summary="Median active time and effective hourly pay",
        description=(
            "The median over participants of the sum of their label durations, the reward "
            "per participant over it per hour, and Prolific's minimum and recommended rates."
        ),
        responses={200: FairPayResponse, **error_responses(401, 403, 404)},
    )
    def get(self, request, slug: str):
        return Response(FairPayResponse(fair_pay(_batch(slug))).data)
