"""``manage.py prolific review`` and the Review tab: the right proposal for each kind of
submission; applying twice calls Prolific once per submission."""

from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Item
from annotation.services.annotators import exclude_annotator
from core.audit import history
from crowd.models import Platform, ReviewDecision
from crowd.services.prolific_client import ProlificClient
from crowd.services.review import propose
from crowd.services.submissions import sync_prolific
from tests.crowd.helpers import label_items, prolific_batch, prolific_participant
from tests.staff import staff_client

pytestmark = pytest.mark.django_db


def make_check_items(batch, n):
    checks = list(Item.objects.filter(batch=batch).order_by("position")[:n])
    Item.objects.filter(pk__in=[item.pk for item in checks]).update(
        is_check=True, gold=[5], target=0
    )


def crowd(prolific):
    """A batch whose attention checks come after every item, and five participants:
    a worker, a spammer who fails two checks (excluded by the policy), one excluded by
    staff, one who did nothing, and one still working."""
    batch = prolific_batch(
        prolific, n_items=12, per_item=3, check_every=1, exclude_after_failed_checks=2
    )
    make_check_items(batch, 4)
    people = {}
    for pid in ("worker", "spammer", "staff-excluded", "idle", "still-active"):
        people[pid], _ = prolific_participant(batch, prolific, pid)
    label_items(batch, people["worker"], 3, value=5)  # checks answered with the gold 5
    label_items(batch, people["spammer"], 6, value=1)  # fails every check: excluded at 2
    label_items(batch, people["staff-excluded"], 2, value=5)
    exclude_annotator(batch, people["staff-excluded"].annotator, reason="copied answers")
    label_items(batch, people["still-active"], 1, value=5)
    for pid in ("worker", "spammer", "staff-excluded", "idle"):
        prolific.set_status(f"sub-{pid}", "AWAITING REVIEW")
    return batch, people


def by_participant(proposals):
    return {p.participant_id: p for p in proposals}


def test_each_kind_of_submission_gets_its_proposal_and_reason(prolific):
    batch, people = crowd(prolific)
    people["spammer"].refresh_from_db()
    assert people["spammer"].excluded_automatically
    sync_prolific(batch, ProlificClient())
    proposals = by_participant(propose(batch, Platform.PROLIFIC))
    assert set(proposals) == {"worker", "spammer", "staff-excluded", "idle"}
    assert proposals["worker"].action == "approve" and "did" in proposals["worker"].reason
    assert proposals["spammer"].action == "screen_out"
    assert "attention checks" in proposals["spammer"].reason
    assert proposals["staff-excluded"].action == "manual"
    assert "copied answers" in proposals["staff-excluded"].reason
    assert proposals["idle"].action == "manual" and proposals["idle"].reason == "did no item"
    # rejection only when asked for, and only after two failed checks
    strict = by_participant(propose(batch, Platform.PROLIFIC, reject_failed_checks=True))
    assert strict["spammer"].action == "reject" and strict["spammer"].checks_failed >= 2
    assert strict["worker"].action == "approve"


def test_the_dry_run_prints_the_table_and_changes_nothing(prolific):
    batch, _ = crowd(prolific)
    out = StringIO()
    call_command("prolific", "review", batch.slug, stdout=out)
    text = out.getvalue()
    assert "sub-worker" in text and "approve" in text and "screen_out" in text
    assert "Dry run" in text
    assert prolific.writes() == []


def test_applying_twice_calls_prolific_once_per_submission(prolific):
    batch, _ = crowd(prolific)
    for _ in range(2):
        call_command("prolific", "review", batch.slug, "--apply", stdout=StringIO())
    assert [
        (c.path, c.body.get("submission_ids"), c.body.get("action")) for c in prolific.writes()
    ] == [
        ("/api/v1/submissions/bulk-approve/", ["sub-worker"], None),
        ("/api/v1/submissions/sub-spammer/transition/", None, "SCREEN_OUT"),
    ]


def test_a_5xx_after_the_approval_took_effect_never_doubles_it(prolific):
    batch, _ = crowd(prolific)
    prolific.fail("POST", "/api/v1/submissions/bulk-approve/", "500_after")
    call_command("prolific", "review", batch.slug, "--apply", stdout=StringIO())
    after_first = len(prolific.writes())
    call_command("prolific", "review", batch.slug, "--apply", stdout=StringIO())
    assert len(prolific.writes()) == after_first  # the second run sends nothing
    approvals = prolific.writes("/api/v1/submissions/bulk-approve/")
    # the first attempt took effect but answered 500; its retry found nothing to do
    assert [c.body["submission_ids"] for c in approvals] == [["sub-worker"], ["sub-worker"]]
    transitions = prolific.writes("/api/v1/submissions/sub-")
    assert [(c.path, c.body["action"]) for c in transitions] == [
        ("/api/v1/submissions/sub-spammer/transition/", "SCREEN_OUT")
    ]
    statuses = {s["participant_id"]: s["status"] for s in prolific.submissions.values()}
    assert statuses["worker"] == "APPROVED" and statuses["spammer"] == "SCREENED OUT"
    assert statuses["idle"] == "AWAITING REVIEW"  # left for a person
    decisions = dict(ReviewDecision.objects.values_list("participant_id", "state"))
    assert decisions == {"worker": "done", "spammer": "done"}
    actions = set(history(batch).values_list("action", flat=True))
    assert {"prolific.approve", "prolific.screen_out"} <= actions


def test_an_answer_lost_by_a_timeout_is_settled_by_the_next_sync_not_resent(prolific):
    batch, _ = crowd(prolific)
    prolific.fail("POST", "/api/v1/submissions/sub-spammer/transition/", "timeout_after", times=4)
    out = StringIO()
    call_command("prolific", "review", batch.slug, "--apply", stdout=out)
    assert "no answer 1" in out.getvalue()
    sent = len(prolific.writes("/api/v1/submissions/sub-spammer/"))
    assert prolific.submissions["sub-spammer"]["status"] == "SCREENED OUT"
    call_command("prolific", "review", batch.slug, "--apply", stdout=StringIO())
    assert len(prolific.writes("/api/v1/submissions/sub-spammer/")) == sent
    assert ReviewDecision.objects.get(participant_id="spammer").state == "done"


def test_a_transition_prolific_refuses_is_recorded_failed_and_the_rest_goes_on(prolific):
    batch, _ = crowd(prolific)
    prolific.fail("POST", "/api/v1/submissions/sub-spammer/transition/", "400")
    out = StringIO()
    call_command("prolific", "review", batch.slug, "--apply", stdout=out)
    assert "refused 1" in out.getvalue()
    assert prolific.submissions["sub-spammer"]["status"] == "AWAITING REVIEW"
    decisions = dict(ReviewDecision.objects.values_list("participant_id", "state"))
    assert decisions == {"worker": "done", "spammer": "failed"}
    refused = history(batch).get(action="prolific.screen_out.refused")
    assert "not allowed now" in refused.reason


def test_a_rejection_carries_a_message_and_the_category(prolific):
    batch, _ = crowd(prolific)
    call_command(
        "prolific", "review", batch.slug, "--apply", "--reject-failed-checks", stdout=StringIO()
    )
    (call,) = prolific.writes("/api/v1/submissions/sub-spammer/")
    assert call.body["action"] == "REJECT" and call.body["rejection_category"] == "FAILED_CHECK"
    assert len(call.body["message"]) >= 100
    assert prolific.submissions["sub-spammer"]["status"] == "REJECTED"


def test_the_review_tab_reads_for_researchers_and_applies_for_admins(prolific):
    batch, _ = crowd(prolific)
    sync_prolific(batch, ProlificClient())
    researcher = staff_client("researcher")
    page = researcher.get(f"/manage/{batch.slug}/review")
    assert page.status_code == 200
    text = page.content.decode()
    assert "sub-worker" in text and "did no item" in text and "Apply the proposed" not in text
    assert researcher.post(f"/manage/{batch.slug}/review").status_code == 403
    assert prolific.writes() == []
    admin = staff_client("admin")
    assert (
        "Apply the proposed actions" in admin.get(f"/manage/{batch.slug}/review").content.decode()
    )
    answer = admin.post(f"/manage/{batch.slug}/review", follow=True)
    assert "Approved 1, screened out 1" in answer.content.decode()
    assert prolific.submissions["sub-worker"]["status"] == "APPROVED"
