"""The shapes of the staff API's answers, for the OpenAPI schema (``/api/schema/``).

Schema only: the views answer with what the services and selectors return
(``annotation.selectors.batch_dashboard``, ``annotator_rows``, ``core.audit.event_payload``,
``ImportSummary``); these serializers describe those dicts field by field, so the docs
show real fields and examples instead of a free-form object.
"""

from drf_spectacular.utils import OpenApiExample
from rest_framework import serializers

from annotation.models import BatchState


class ImportSummaryResponse(serializers.Serializer):
    """What an accepted items file added (``annotation.services.importing.ImportSummary``)."""

    items_created = serializers.IntegerField(help_text="Items added to the batch.")
    queries_created = serializers.IntegerField(help_text="Queries not stored before.")
    responses_created = serializers.IntegerField(help_text="Responses not stored before.")


IMPORT_EXAMPLE = OpenApiExample(
    "Three items of one query",
    value={"items_created": 3, "queries_created": 1, "responses_created": 3},
    response_only=True,
    status_codes=["201"],
)
IMPORT_REFUSED_EXAMPLE = OpenApiExample(
    "A refused file (nothing imported)",
    value={
        "detail": "items.jsonl was rejected, nothing was imported",
        "problems": [
            "items.jsonl:2: response: must not be empty",
            "items.jsonl:3: row: not valid JSON",
        ],
    },
    response_only=True,
    status_codes=["400"],
)


class _ItemCounts(serializers.Serializer):
    total = serializers.IntegerField(help_text="Items (attention checks not included).")
    complete = serializers.IntegerField(help_text="Items with all N counted labels.")
    in_progress = serializers.IntegerField(help_text="Items with some labels or leases.")
    untouched = serializers.IntegerField(help_text="Items nobody has leased yet.")


class _LabelCounts(serializers.Serializer):
    counted = serializers.IntegerField(help_text="Labels that count towards N.")
    surplus = serializers.IntegerField(help_text="Late labels for items already full.")
    excluded = serializers.IntegerField(help_text="Labels of excluded annotators.")


class _LeaseCounts(serializers.Serializer):
    open = serializers.IntegerField(help_text="Open leases still within their lease time.")
    expired = serializers.IntegerField(
        help_text="Open leases past their expiry; their slot goes back at the next request."
    )


class ProgressResponse(serializers.Serializer):
    """The live figures of a batch (``annotation.selectors.batch_dashboard``)."""

    batch = serializers.CharField(help_text="The batch's slug.")
    category = serializers.CharField(
        required=False, help_text="The category filter asked for (absent without one)."
    )
    subcategory = serializers.CharField(
        required=False, help_text="The sub-category filter asked for (absent without one)."
    )
    state = serializers.ChoiceField(choices=BatchState.choices)
    annotations_per_item = serializers.IntegerField(help_text="N, labels per item.")
    items = _ItemCounts()
    labels = _LabelCounts()
    target_labels = serializers.IntegerField(help_text="Items × N.")
    labels_remaining = serializers.IntegerField(help_text="target_labels − counted labels.")
    labels_held = serializers.IntegerField(help_text="Of the remaining, held by open leases.")
    labels_unreserved = serializers.IntegerField(help_text="Of the remaining, held by none.")
    leases = _LeaseCounts()
    active_annotators = serializers.IntegerField(
        help_text="Annotators who leased or labelled in the last 10 minutes."
    )
    median_seconds_per_label = serializers.FloatField(allow_null=True)
    last_activity_at = serializers.DateTimeField(allow_null=True)
    projected_finish_at = serializers.DateTimeField(
        allow_null=True,
        help_text=(
            "Now + remaining labels at the last hour's counted-label rate; null when no "
            "honest projection exists (not live, too few labels, or every remaining slot "
            "held by a lease)."
        ),
    )
    projection_note = serializers.CharField(
        allow_null=True, help_text="Why there is no projection, or what it rests on."
    )
    share_done = serializers.FloatField(help_text="Counted labels / target_labels.")


PROGRESS_EXAMPLE = OpenApiExample(
    "A live batch, half done",
    value={
        "batch": "my-study",
        "state": "live",
        "annotations_per_item": 25,
        "items": {"total": 30, "complete": 12, "in_progress": 18, "untouched": 0},
        "labels": {"counted": 375, "surplus": 2, "excluded": 25},
        "target_labels": 750,
        "labels_remaining": 375,
        "labels_held": 9,
        "labels_unreserved": 366,
        "leases": {"open": 8, "expired": 1},
        "active_annotators": 9,
        "median_seconds_per_label": 21.4,
        "last_activity_at": "2026-03-01T14:04:51Z",
        "projected_finish_at": "2026-03-01T16:10:00Z",
        "projection_note": (
            "At the last hour's pace (180 labels an hour); 9 labels held by open leases "
            "(1 of them expired; their slots go back at the next request for work)."
        ),
        "share_done": 0.5,
    },
    response_only=True,
)


class AnnotatorResponse(serializers.Serializer):
    """One annotator of a batch (``annotation.selectors.annotator_rows``)."""

    annotator = serializers.CharField(help_text="The stable pseudonym used in exports.")
    platform = serializers.CharField(help_text="prolific, mturk, generic or staff.")
    platform_id = serializers.CharField(
        required=False, help_text="The platform's own id; for admins only."
    )
    status = serializers.ChoiceField(choices=["active", "excluded"])
    n_labels = serializers.IntegerField(help_text="Labels given, of every status.")
    n_counted = serializers.IntegerField()
    n_surplus = serializers.IntegerField()
    n_excluded = serializers.IntegerField()
    median_duration_ms = serializers.IntegerField(allow_null=True)
    attention_checks_passed = serializers.IntegerField()
    attention_checks_failed = serializers.IntegerField()
    first_seen_at = serializers.DateTimeField()
    last_seen_at = serializers.DateTimeField(allow_null=True)


ANNOTATORS_EXAMPLE = OpenApiExample(
    "One annotator, as an admin sees them",
    value=[
        {
            "annotator": "a-7f3k2q",
            "platform": "prolific",
            "platform_id": "5f8a1c0e9b2d4e0012ab34cd",
            "status": "active",
            "n_labels": 30,
            "n_counted": 29,
            "n_surplus": 1,
            "n_excluded": 0,
            "median_duration_ms": 18250,
            "attention_checks_passed": 2,
            "attention_checks_failed": 0,
            "first_seen_at": "2026-03-01T13:02:11Z",
            "last_seen_at": "2026-03-01T13:41:57Z",
        }
    ],
    response_only=True,
)


class ExclusionResponse(serializers.Serializer):
    """The outcome of excluding an annotator, or of undoing it."""

    annotator = serializers.CharField(help_text="The pseudonym.")
    status = serializers.ChoiceField(choices=["active", "excluded"])
    labels_excluded = serializers.IntegerField(
        required=False, help_text="Exclude: labels that stopped counting."
    )
    counted = serializers.IntegerField(
        required=False, help_text="Include: labels that count again."
    )
    surplus = serializers.IntegerField(
        required=False, help_text="Include: labels whose slot was refilled meanwhile."
    )


class HistoryEventResponse(serializers.Serializer):
    """One event of a batch's audit trail (``core.audit.event_payload``)."""

    at = serializers.DateTimeField()
    actor = serializers.CharField(
        help_text="The user's name, 'command line', 'system' or 'policy: …'."
    )
    action = serializers.CharField(help_text="e.g. batch.publish, items.import, annotator.exclude")
    subject = serializers.CharField(help_text="What was changed, e.g. the batch's slug.")
    changes = serializers.DictField(help_text='{"field": [old, new]} or the action\'s figures.')
    reason = serializers.CharField(help_text="Why, when recorded (e.g. by a policy).")


HISTORY_EXAMPLE = OpenApiExample(
    "Published from the command line",
    value=[
        {
            "at": "2026-03-01T13:00:02Z",
            "actor": "command line",
            "action": "batch.publish",
            "subject": "my-study",
            "changes": {"state": ["draft", "live"]},
            "reason": "",
        }
    ],
    response_only=True,
)
