"""MTurk through boto3, with botocore's Stubber in place of AWS: HIT creation, review,
bonuses with a UniqueRequestToken, sandbox and production endpoints."""

from decimal import Decimal
from io import StringIO

import boto3
import pytest
from botocore.stub import ANY, Stubber
from django.core.management import CommandError, call_command

from annotation.services.annotators import identify_annotator, join_batch
from core.models import AuditEvent
from crowd.models import BonusLine, MTurkHIT, PlatformCall, ReviewDecision
from crowd.services import mturk
from tests.crowd.helpers import label_items
from tests.factories import make_batch

pytestmark = pytest.mark.django_db


@pytest.fixture
def stubbed(monkeypatch, settings):
    """An MTurk client whose answers the test queues (Stubber checks every request
    against the service's own model and the expected parameters)."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    settings.MTURK_SANDBOX = True
    settings.MTURK_ENDPOINT_URL = ""
    settings.CROWD_PLACES_MARGIN = 0.0
    client = boto3.client("mturk", region_name="us-east-1", endpoint_url=mturk.endpoint_url())
    monkeypatch.setattr(mturk, "make_client", lambda: client)
    with Stubber(client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


def worker(batch, worker_id, assignment_id):
    return join_batch(
        batch,
        identify_annotator("mturk", worker_id),
        {"workerId": worker_id, "assignmentId": assignment_id, "hitId": "HIT1"},
    )


def test_endpoints_are_the_sandbox_unless_turned_off(settings):
    settings.MTURK_ENDPOINT_URL = ""
    settings.MTURK_SANDBOX = True
    assert mturk.endpoint_url() == "https://mturk-requester-sandbox.us-east-1.amazonaws.com"
    settings.MTURK_SANDBOX = False
    assert mturk.endpoint_url() == "https://mturk-requester.us-east-1.amazonaws.com"


def test_a_hit_shows_the_batch_link_needs_what_the_batch_needs_and_keeps_earlier_workers_out(
    stubbed,
):
    batch = make_batch(n_items=10, per_item=2, quota_per_annotator=5)
    worker(batch, "W-EARLIER", "A0")
    stubbed.add_response(
        "create_qualification_type",
        {"QualificationType": {"QualificationTypeId": "Q1"}},
        {"Name": ANY, "Description": ANY, "QualificationTypeStatus": "Active"},
    )
    stubbed.add_response(
        "associate_qualification_with_worker",
        {},
        {
            "QualificationTypeId": "Q1",
            "WorkerId": "W-EARLIER",
            "IntegerValue": 1,
            "SendNotification": False,
        },
    )
    question = mturk.external_question("https://study.example.org/work/" + batch.slug + "/", 900)
    stubbed.add_response(
        "create_hit",
        {"HIT": {"HITId": "HIT1", "HITTypeId": "T1"}},
        {
            "MaxAssignments": 4,  # 20 slots ÷ 5 per worker (no margin)
            "LifetimeInSeconds": 7 * 24 * 3600,
            "AssignmentDurationInSeconds": ANY,
            "Reward": "1.50",
            "Title": batch.title,
            "Description": ANY,
            "Keywords": ANY,
            "Question": question,
            "RequesterAnnotation": batch.slug,
            "QualificationRequirements": [
                {
                    "QualificationTypeId": "Q1",
                    "Comparator": "DoesNotExist",
                    "ActionsGuarded": "DiscoverPreviewAndAccept",
                }
            ],
            "UniqueRequestToken": ANY,
        },
    )
    out = StringIO()
    call_command("mturk", "create-hit", batch.slug, "--base-url", "https://study.example.org",
                 "--reward", "1.50", "--frame-height", "900", "--apply", stdout=out)  # fmt: skip
    assert "Created HIT HIT1 (4 assignments)" in out.getvalue()
    assert "<FrameHeight>900</FrameHeight>" in question and "ExternalQuestion.xsd" in question
    hit = MTurkHIT.objects.get()
    assert (hit.qualification_type_id, hit.sandbox) == ("Q1", True)
    assert PlatformCall.objects.filter(method="create_hit", platform="mturk").count() == 1


def _assignments(stubbed, assignments, entered=("W-GOOD", "W-IDLE")):
    """The sync: the HIT's assignments, then the qualification for everyone who entered."""
    stubbed.add_response(
        "list_assignments_for_hit",
        {"Assignments": assignments, "NumResults": len(assignments)},
        {
            "HITId": "HIT1",
            "MaxResults": 100,
            "AssignmentStatuses": ["Submitted", "Approved", "Rejected"],
        },
    )
    for worker_id in entered:
        stubbed.add_response(
            "associate_qualification_with_worker",
            {},
            {"QualificationTypeId": "Q1", "WorkerId": worker_id, "IntegerValue": 1,
             "SendNotification": False},
        )  # fmt: skip


def hit_batch():
    batch = make_batch(n_items=4, per_item=2)
    MTurkHIT.objects.create(
        batch=batch, hit_id="HIT1", qualification_type_id="Q1", max_assignments=2,
        reward=Decimal("1.00"), sandbox=True,
    )  # fmt: skip
    good = worker(batch, "W-GOOD", "A-GOOD")
    worker(batch, "W-IDLE", "A-IDLE")
    label_items(batch, good, 2, duration_ms=60_000)
    return batch


ASSIGNMENTS = [
    {
        "AssignmentId": "A-GOOD",
        "WorkerId": "W-GOOD",
        "HITId": "HIT1",
        "AssignmentStatus": "Submitted",
    },
    {
        "AssignmentId": "A-IDLE",
        "WorkerId": "W-IDLE",
        "HITId": "HIT1",
        "AssignmentStatus": "Submitted",
    },
]


def test_review_approves_who_worked_leaves_the_rest_and_never_approves_twice(stubbed):
    batch = hit_batch()
    _assignments(stubbed, ASSIGNMENTS)
    stubbed.add_response("approve_assignment", {}, {"AssignmentId": "A-GOOD"})
    out = StringIO()
    call_command("mturk", "review", batch.slug, "--apply", stdout=out)
    assert "Approved 1, rejected 0" in out.getvalue()
    # MTurk now lists the approved assignment as Approved: nothing more is sent
    _assignments(stubbed, [{**ASSIGNMENTS[0], "AssignmentStatus": "Approved"}, ASSIGNMENTS[1]])
    call_command("mturk", "review", batch.slug, "--apply", stdout=StringIO())
    assert dict(ReviewDecision.objects.values_list("participant_id", "state")) == {"W-GOOD": "done"}


@pytest.mark.parametrize(
    ("code", "status", "said", "state"),
    [
        # MTurk answered no: the decision failed (and is in the History)
        ("RequestError", 400, "refused 1, no answer 0", "failed"),
        # no real answer: the decision stays "sent" until a sync shows what happened
        ("ServiceUnavailable", 503, "refused 0, no answer 1", "sent"),
    ],
)
def test_an_approval_refused_or_unanswered_is_recorded_as_such(stubbed, code, status, said, state):
    batch = hit_batch()
    _assignments(stubbed, ASSIGNMENTS)
    stubbed.add_client_error("approve_assignment", code, http_status_code=status)
    out = StringIO()
    call_command("mturk", "review", batch.slug, "--apply", stdout=out)
    assert f"Approved 0, rejected 0; {said}." in out.getvalue()
    assert dict(ReviewDecision.objects.values_list("participant_id", "state")) == {"W-GOOD": state}
    refusals = AuditEvent.objects.filter(action="mturk.approve.refused")
    assert refusals.count() == (1 if state == "failed" else 0)


def test_a_bonus_lost_to_a_5xx_is_resent_with_the_same_token_and_paid_once(stubbed):
    batch = hit_batch()
    approved = [{**ASSIGNMENTS[0], "AssignmentStatus": "Approved"}]
    _assignments(stubbed, approved)
    expected = {
        "WorkerId": "W-GOOD",
        "BonusAmount": "0.50",
        "AssignmentId": "A-GOOD",
        "Reason": ANY,
        "UniqueRequestToken": ANY,
    }
    stubbed.add_client_error("send_bonus", "ServiceUnavailable", http_status_code=503,
                             expected_params=expected)  # fmt: skip
    with pytest.raises(CommandError, match="24 hours"):
        call_command(
            "mturk", "bonus", batch.slug, "--per-item", "0.25", "--apply", stdout=StringIO()
        )
    line = BonusLine.objects.get()
    assert line.state == "unknown"
    _assignments(stubbed, approved)
    stubbed.add_response("send_bonus", {}, {**expected, "UniqueRequestToken": line.request_token})
    out = StringIO()
    call_command("mturk", "bonus", batch.slug, "--per-item", "0.25", "--apply", stdout=out)
    assert "Resuming bonus run" in out.getvalue()
    line.refresh_from_db()
    assert (line.state, line.amount, line.run.state) == ("paid", Decimal("0.50"), "paid")
    # a third run owes nothing and sends nothing
    _assignments(stubbed, approved)
    out = StringIO()
    call_command("mturk", "bonus", batch.slug, "--per-item", "0.25", "--apply", stdout=out)
    assert "Nobody is owed anything" in out.getvalue()
    tokens = list(
        PlatformCall.objects.filter(method="send_bonus").values_list("request_body", flat=True)
    )
    assert len(tokens) == 2 and tokens[0]["UniqueRequestToken"] == tokens[1]["UniqueRequestToken"]
