"""Review proposals at their edges (SPEC.md, "Crowd platforms", "Review"):

* **screen out** (Prolific) is for everyone excluded automatically by the batch's checks —
  the attention checks *or the flag policy* — never a rejection for being flagged;
* **reject** only when the researcher asks for it *and* after at least two failed
  attention checks (Prolific's rule): with ``exclude_after_failed_checks = 1`` someone
  excluded at their first failed check is screened out, not rejected;
* **leave for manual review** a submission with no record of the participant in the
  batch, and — on MTurk, which has no screen-out — someone excluded by the checks.

Against the fake Prolific (``prolific`` fixture) and botocore's Stubber in place of
MTurk, through the real review service and ``manage.py prolific|mturk review``; what the
platform received is asserted, not only what was proposed.
"""

from decimal import Decimal
from io import StringIO

import boto3
import pytest
from botocore.stub import Stubber
from django.core.management import call_command

from annotation.models import Item, Label, Participation
from annotation.services.annotators import identify_annotator, join_batch
from crowd.models import MTurkHIT, Platform, ReviewDecision
from crowd.services import mturk
from crowd.services.prolific_client import ProlificClient
from crowd.services.review import propose
from crowd.services.submissions import apply_status, sync_prolific
from tests.crowd.helpers import label_items, prolific_batch, prolific_participant
from tests.factories import make_batch

pytestmark = pytest.mark.django_db


def make_check_items(batch, n):
    """The first ``n`` items become attention checks whose gold answer is 5."""
    checks = list(Item.objects.filter(batch=batch).order_by("position")[:n])
    Item.objects.filter(pk__in=[item.pk for item in checks]).update(
        is_check=True, gold=[5], target=0
    )


def by_participant(proposals):
    return {p.participant_id: p for p in proposals}


def review(batch, *args) -> str:
    out = StringIO()
    call_command("prolific", "review", batch.slug, *args, stdout=out)
    return out.getvalue()


def transitions(prolific) -> list[tuple[str, str]]:
    return [
        (call.path, call.body.get("action")) for call in prolific.writes("/api/v1/submissions/sub-")
    ]


# --------------------------------------------------------------------------- Prolific


def test_someone_excluded_by_the_flag_policy_is_screened_out_never_rejected(prolific):
    batch = prolific_batch(
        prolific, n_items=14, per_item=1, straightline_run=3, flag_policy="exclude",
        flagged_share_to_exclude=0.5,
    )  # fmt: skip
    liner, _ = prolific_participant(batch, prolific, "straight-liner")
    careful, _ = prolific_participant(batch, prolific, "careful")
    label_items(batch, liner, 12, value=5)  # excluded by the policy at the 10th label
    label_items(batch, careful, 2, value=4)
    liner.refresh_from_db()
    assert liner.status == "excluded" and liner.excluded_automatically
    assert "straight-lined" in liner.exclusion_reason
    assert not Label.objects.filter(annotator=liner.annotator, status="check").exists()
    for pid in ("straight-liner", "careful"):
        prolific.set_status(f"sub-{pid}", "AWAITING REVIEW")
    sync_prolific(batch, ProlificClient())
    for strict in (False, True):  # no failed check: never a rejection, even when asked
        proposals = by_participant(propose(batch, Platform.PROLIFIC, reject_failed_checks=strict))
        assert proposals["straight-liner"].action == "screen_out", proposals["straight-liner"]
        assert proposals["straight-liner"].checks_failed == 0
        assert "straight-lined" in proposals["straight-liner"].reason
        assert proposals["careful"].action == "approve"
    review(batch, "--apply", "--reject-failed-checks")
    assert transitions(prolific) == [
        ("/api/v1/submissions/sub-straight-liner/transition/", "SCREEN_OUT")
    ]
    assert prolific.submissions["sub-straight-liner"]["status"] == "SCREENED OUT"
    assert prolific.submissions["sub-careful"]["status"] == "APPROVED"


def test_excluded_at_one_failed_check_is_screened_out_not_rejected(prolific):
    """``exclude_after_failed_checks = 1`` excludes at the first failure; Prolific allows a
    rejection only after two, so even with ``--reject-failed-checks`` it is a screen-out."""
    batch = prolific_batch(
        prolific, n_items=10, per_item=2, check_every=1, exclude_after_failed_checks=1
    )
    make_check_items(batch, 3)
    slip, _ = prolific_participant(batch, prolific, "one-slip")
    label_items(batch, slip, 6, value=1)  # a regular item, then a check failed: excluded
    slip.refresh_from_db()
    assert slip.status == "excluded" and slip.excluded_automatically
    failed = Label.objects.filter(annotator=slip.annotator, status="check", check_passed=False)
    assert failed.count() == 1
    prolific.set_status("sub-one-slip", "AWAITING REVIEW")
    sync_prolific(batch, ProlificClient())
    (proposal,) = propose(batch, Platform.PROLIFIC, reject_failed_checks=True)
    assert (proposal.action, proposal.checks_failed) == ("screen_out", 1), proposal
    text = review(batch, "--apply", "--reject-failed-checks")
    assert "Approved 0, screened out 1, rejected 0" in text
    assert transitions(prolific) == [("/api/v1/submissions/sub-one-slip/transition/", "SCREEN_OUT")]
    assert prolific.submissions["sub-one-slip"]["status"] == "SCREENED OUT"
    assert dict(ReviewDecision.objects.values_list("participant_id", "action")) == {
        "one-slip": "screen_out"
    }


def test_a_submission_with_no_participation_is_left_for_manual_review(prolific):
    batch = prolific_batch(prolific, n_items=4, per_item=2)
    worker, _ = prolific_participant(batch, prolific, "worker")
    label_items(batch, worker, 2)
    prolific.set_status("sub-worker", "AWAITING REVIEW")
    # took the study on Prolific but never reached the batch (no participation here)
    prolific.add_submission(batch.prolific_study_id, "stranger", status="AWAITING REVIEW")
    sync_prolific(batch, ProlificClient())
    assert not Participation.objects.filter(annotator__platform_id="stranger").exists()
    proposals = by_participant(propose(batch, Platform.PROLIFIC, reject_failed_checks=True))
    assert proposals["stranger"].action == "manual"
    assert proposals["stranger"].reason == "no record of this participant in the batch"
    assert proposals["stranger"].annotator == "" and proposals["stranger"].items_done == 0
    review(batch, "--apply", "--reject-failed-checks")
    approvals = prolific.writes("/api/v1/submissions/bulk-approve/")
    assert [call.body["submission_ids"] for call in approvals] == [["sub-worker"]]
    assert transitions(prolific) == []  # nothing sent about the stranger
    assert prolific.submissions["sub-stranger"]["status"] == "AWAITING REVIEW"
    assert not ReviewDecision.objects.filter(participant_id="stranger").exists()


# --------------------------------------------------------------------------- MTurk


@pytest.fixture
def stubbed(monkeypatch, settings):
    """An MTurk client whose answers the test queues; any call not queued fails."""
    monkeypatch.setenv("AWS_ACCESS_KEY_ID", "testing")
    monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "testing")
    settings.MTURK_SANDBOX = True
    settings.MTURK_ENDPOINT_URL = ""
    client = boto3.client("mturk", region_name="us-east-1", endpoint_url=mturk.endpoint_url())
    monkeypatch.setattr(mturk, "make_client", lambda: client)
    with Stubber(client) as stubber:
        yield stubber
        stubber.assert_no_pending_responses()


def mturk_worker(batch, worker_id):
    return join_batch(
        batch,
        identify_annotator("mturk", worker_id),
        {"workerId": worker_id, "assignmentId": f"A-{worker_id}", "hitId": "HIT1"},
    )


def checked_hit_batch(**settings):
    batch = make_batch(n_items=10, per_item=2, check_every=1, **settings)
    make_check_items(batch, 3)
    MTurkHIT.objects.create(
        batch=batch, hit_id="HIT1", qualification_type_id="Q1", max_assignments=4,
        reward=Decimal("1.00"), sandbox=True,
    )  # fmt: skip
    return batch


def submitted(batch, *worker_ids):
    """What ``mturk sync`` stores for each worker's submitted assignment."""
    for worker_id in worker_ids:
        apply_status(
            batch,
            Platform.MTURK,
            submission_id=f"A-{worker_id}",
            participant_id=worker_id,
            status="Submitted",
            hit_id="HIT1",
        )


def test_on_mturk_someone_excluded_by_the_checks_is_left_for_manual_review(stubbed):
    batch = checked_hit_batch(exclude_after_failed_checks=2)
    good, spammer = mturk_worker(batch, "W-GOOD"), mturk_worker(batch, "W-SPAM")
    label_items(batch, good, 3, value=5)  # passes its check
    label_items(batch, spammer, 8, value=1)  # fails two checks: excluded by the policy
    spammer.refresh_from_db()
    assert spammer.status == "excluded" and spammer.excluded_automatically
    listed = [
        {"AssignmentId": f"A-{w}", "WorkerId": w, "HITId": "HIT1", "AssignmentStatus": "Submitted"}
        for w in ("W-GOOD", "W-SPAM")
    ]
    stubbed.add_response(
        "list_assignments_for_hit",
        {"Assignments": listed, "NumResults": 2},
        {"HITId": "HIT1", "MaxResults": 100,
         "AssignmentStatuses": ["Submitted", "Approved", "Rejected"]},
    )  # fmt: skip
    for worker_id in ("W-GOOD", "W-SPAM"):
        stubbed.add_response(
            "associate_qualification_with_worker",
            {},
            {"QualificationTypeId": "Q1", "WorkerId": worker_id, "IntegerValue": 1,
             "SendNotification": False},
        )  # fmt: skip
    # only the approval is queued: a reject (or any other call) for the spammer would fail
    stubbed.add_response("approve_assignment", {}, {"AssignmentId": "A-W-GOOD"})
    out = StringIO()
    call_command("mturk", "review", batch.slug, "--apply", stdout=out)
    assert "Approved 1, rejected 0" in out.getvalue()
    proposals = by_participant(propose(batch, Platform.MTURK))
    assert proposals["W-SPAM"].action == "manual", proposals["W-SPAM"]
    assert "failed 2 of" in proposals["W-SPAM"].reason and "MTurk" in proposals["W-SPAM"].reason
    assert dict(ReviewDecision.objects.values_list("participant_id", "state")) == {"W-GOOD": "done"}


def test_on_mturk_one_failed_check_is_never_rejected_even_when_asked():
    batch = checked_hit_batch(exclude_after_failed_checks=1)
    slip = mturk_worker(batch, "W-SLIP")
    label_items(batch, slip, 4, value=1)
    slip.refresh_from_db()
    assert slip.status == "excluded" and slip.excluded_automatically
    submitted(batch, "W-SLIP")
    for strict in (False, True):
        (proposal,) = propose(batch, Platform.MTURK, reject_failed_checks=strict)
        assert (proposal.action, proposal.checks_failed) == ("manual", 1), proposal


def test_on_mturk_someone_excluded_by_the_flag_policy_is_left_for_manual_review():
    batch = make_batch(
        n_items=14, per_item=1, straightline_run=3, flag_policy="exclude",
        flagged_share_to_exclude=0.5,
    )  # fmt: skip
    liner = mturk_worker(batch, "W-LINER")
    label_items(batch, liner, 12, value=2)
    liner.refresh_from_db()
    assert liner.status == "excluded" and liner.excluded_automatically
    submitted(batch, "W-LINER")
    for strict in (False, True):
        (proposal,) = propose(batch, Platform.MTURK, reject_failed_checks=strict)
        assert proposal.action == "manual" and "straight-lined" in proposal.reason, proposal
