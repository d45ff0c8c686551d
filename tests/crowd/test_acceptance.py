"""The issue's acceptance run, in small: a batch run as a Prolific study with a fake
Prolific in front; some participants return mid-item (webhook), one times out (sync), a
quarter fail two checks and are screened out, latecomers fill the rest."""

import json
import time
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command

from annotation.models import Assignment, Item, Label
from crowd.services.webhooks import signature
from tests.crowd.conftest import WEBHOOK_SECRET
from tests.crowd.helpers import hold_lease, label_items, prolific_batch, prolific_participant

pytestmark = pytest.mark.django_db
N = 2


def webhook(client, submission_id, pid, status, event_id):
    body = json.dumps(
        {"resource_id": submission_id, "event_type": "submission.status.change",
         "participant_id": pid, "status": status}
    ).encode()  # fmt: skip
    stamp = str(int(time.time()))
    return client.post(
        "/hooks/prolific/", data=body, content_type="application/json",
        headers={"X-Prolific-Request-Signature": signature(WEBHOOK_SECRET, stamp, body),
                 "X-Prolific-Request-Timestamp": stamp, "X-Event-ID": event_id},
    )  # fmt: skip


def test_a_study_on_prolific_ends_with_exactly_n_and_everyone_treated_right(client, prolific):
    batch = prolific_batch(
        prolific, n_items=12, per_item=N, quota_per_annotator=4, check_every=1,
        exclude_after_failed_checks=2,
    )  # fmt: skip
    checks = list(Item.objects.filter(batch=batch).order_by("position")[:4])
    Item.objects.filter(pk__in=[c.pk for c in checks]).update(is_check=True, gold=[5], target=0)
    wave = {pid: prolific_participant(batch, prolific, pid) for pid in
            ("w1", "w2", "w3", "w4", "s1", "s2", "r1", "t1")}  # fmt: skip
    for pid in ("s1", "s2"):  # a quarter fail two checks: excluded by the policy
        label_items(batch, wave[pid][0], 6, value=1)
    leases = {pid: hold_lease(batch, wave[pid][0]) for pid in ("r1", "t1")}  # walk away
    item = Item.objects.get(pk=leases["r1"].item_id)
    assert leases["r1"].purpose == "regular" and item.reserved_count >= 1
    before = item.reserved_count
    assert webhook(client, wave["r1"][1], "r1", "RETURNED", "e1").json()["outcome"] == "applied"
    item.refresh_from_db()
    assert item.reserved_count == before - 1  # back within the request
    prolific.set_status(wave["t1"][1], "TIMED-OUT")
    call_command("prolific", "sync", batch.slug, stdout=StringIO())
    assert Assignment.objects.get(pk=leases["t1"].pk).state == "expired"
    for pid in ("w1", "w2", "w3", "w4"):
        label_items(batch, wave[pid][0], 8, value=5)
    late = 0
    while Item.objects.filter(batch=batch, is_check=False, counted_count__lt=N).exists():
        late += 1
        person, _ = prolific_participant(batch, prolific, f"late{late}")
        label_items(batch, person, 8, value=5)
        assert late < 20
    for item in Item.objects.filter(batch=batch, is_check=False):
        assert item.counted_count == N == Label.objects.filter(item=item, status="counted").count()
    # everyone who finished is awaiting review on Prolific
    for submission in prolific.submissions.values():
        if submission["status"] == "ACTIVE":
            submission["status"] = "AWAITING REVIEW"
    for _ in range(2):
        call_command("prolific", "review", batch.slug, "--apply", stdout=StringIO())
    screened = [c.path for c in prolific.writes() if c.body.get("action") == "SCREEN_OUT"]
    assert sorted(screened) == [f"/api/v1/submissions/sub-{p}/transition/" for p in ("s1", "s2")]
    (approval,) = prolific.writes("/api/v1/submissions/bulk-approve/")
    approved = set(approval.body["submission_ids"])
    assert {"sub-w1", "sub-w2", "sub-w3", "sub-w4"} <= approved
    assert not approved & {"sub-s1", "sub-s2", "sub-r1", "sub-t1"}
    for _ in range(2):
        call_command("prolific", "bonus", batch.slug, "--per-item", "0.05", "--apply",
                     stdout=StringIO())  # fmt: skip
    paid = prolific.paid_per_participant()
    expected = {
        pid: Decimal("0.05")
        * Label.objects.filter(
            annotator__platform_id=pid, status__in=["counted", "surplus"]
        ).count()
        for pid in paid
    }
    assert paid == expected and set(paid) == {sid[4:] for sid in approved}
    assert len(prolific.writes("/api/v1/bulk-bonus-payments/")) == 1
