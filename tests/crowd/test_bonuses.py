"""``manage.py prolific bonus``: amounts from the labels, a preview with the total, paid
once through the two steps; the ledger matches the fake's record under failures."""

from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from annotation.services.batches import update_batch
from crowd.models import BonusLine, BonusRun
from tests.crowd.helpers import label_items, prolific_batch, prolific_participant

pytestmark = pytest.mark.django_db


def paid_crowd(prolific, **settings):
    batch = prolific_batch(prolific, n_items=6, per_item=2, **settings)
    a, _ = prolific_participant(batch, prolific, "alice", status="APPROVED")
    b, _ = prolific_participant(batch, prolific, "bob", status="AWAITING REVIEW")
    c, _ = prolific_participant(batch, prolific, "carol", status="RETURNED")
    label_items(batch, a, 4, duration_ms=90_000)  # 6 minutes
    label_items(batch, b, 2, duration_ms=30_000)  # 1 minute
    label_items(batch, c, 1)
    return batch


def bonus(batch, *args):
    out = StringIO()
    call_command("prolific", "bonus", batch.slug, *args, stdout=out)
    return out.getvalue()


def ledger(batch) -> dict[str, Decimal]:
    totals = {}
    lines = BonusLine.objects.filter(run__batch=batch, run__state="paid")
    for pid, amount in lines.values_list("participant_id", "amount"):
        totals[pid] = totals.get(pid, Decimal(0)) + amount
    return totals


def assert_paid(prolific, batch, **expected: str) -> None:
    """What Prolific paid each participant and what the ledger says was paid agree, and
    are ``expected`` (amounts as decimal strings)."""
    amounts = {participant: Decimal(amount) for participant, amount in expected.items()}
    assert prolific.paid_per_participant() == ledger(batch) == amounts


def test_the_preview_shows_each_amount_and_the_total_and_pays_nothing(prolific):
    batch = paid_crowd(prolific)
    text = bonus(batch, "--per-item", "0.10")
    assert "alice" in text and "0.40" in text and "bob" in text and "0.20" in text
    assert "carol" not in text  # returned: not paid
    assert "Total to pay: 0.60" in text and "Preview" in text
    assert prolific.writes() == []


def test_paid_once_through_set_up_then_pay_and_a_rerun_pays_nobody_again(prolific):
    batch = paid_crowd(prolific)
    text = bonus(batch, "--per-item", "0.10", "--apply")
    assert "paid" in text
    setups = prolific.writes("/api/v1/submissions/bonus-payments/")
    assert [c.body["csv_bonuses"] for c in setups] == ["alice,0.40\nbob,0.20\n"]
    assert len(prolific.writes("/api/v1/bulk-bonus-payments/")) == 1
    again = bonus(batch, "--per-item", "0.10", "--apply")
    assert "Nobody is owed anything" in again
    assert_paid(prolific, batch, alice="0.40", bob="0.20")


def test_labels_added_later_are_paid_as_the_difference(prolific):
    batch = paid_crowd(prolific)
    bonus(batch, "--per-item", "0.10", "--apply")
    from annotation.models import Participation

    label_items(batch, Participation.objects.get(annotator__platform_id="bob"), 1)
    bonus(batch, "--per-item", "0.10", "--apply")
    assert_paid(prolific, batch, alice="0.40", bob="0.30")


def test_a_5xx_while_setting_up_is_retried_and_still_paid_once(prolific):
    batch = paid_crowd(prolific)
    prolific.fail("POST", "/api/v1/submissions/bonus-payments/", "500_after")
    prolific.fail("POST", "/api/v1/bulk-bonus-payments/", "429", retry_after=1)
    bonus(batch, "--per-item", "0.10", "--apply")
    assert len(prolific.bulk_bonuses) == 2  # one set up twice: harmless, never paid
    assert_paid(prolific, batch, alice="0.40", bob="0.20")


def test_a_lost_pay_answer_is_never_resent_until_resolved(prolific):
    batch = paid_crowd(prolific)
    prolific.fail("POST", "/api/v1/bulk-bonus-payments/", "timeout_after")
    with pytest.raises(CommandError, match="resolve"):
        bonus(batch, "--per-item", "0.10", "--apply")
    run = BonusRun.objects.get()
    assert run.state == "unknown"
    with pytest.raises(CommandError, match="may have paid"):
        bonus(batch, "--per-item", "0.10", "--apply")
    assert len(prolific.writes("/api/v1/bulk-bonus-payments/")) == 1
    # the preview says how to settle it (--apply refuses; --resolve settles)
    preview = bonus(batch, "--per-item", "0.10")
    assert f"--resolve {run.pk} paid" in preview and "--apply settles" not in preview
    # the researcher checks Prolific (it did pay) and says so
    assert "now paid" in bonus(batch, "--resolve", str(run.pk), "paid")
    assert "Nobody is owed anything" in bonus(batch, "--per-item", "0.10", "--apply")
    assert_paid(prolific, batch, alice="0.40", bob="0.20")


def test_a_top_up_brings_each_participant_to_the_hourly_rate(prolific):
    batch = paid_crowd(prolific)
    update_batch(batch, {"reward_per_participant": Decimal("0.50"), "reward_currency": "GBP"})
    batch.refresh_from_db()
    # alice: 6 min at 12/h = 1.20, minus the 0.50 reward = 0.70; bob: 0.20 - 0.50 < 0
    text = bonus(batch, "--top-up-hourly", "12", "--apply")
    assert "Total to pay: 0.70 GBP to 1 participant" in text
    assert prolific.paid_per_participant() == {"alice": Decimal("0.70")}
    assert "Nobody is owed anything" in bonus(batch, "--top-up-hourly", "12", "--apply")


def test_a_top_up_needs_the_reward(prolific):
    batch = paid_crowd(prolific)
    with pytest.raises(CommandError, match="reward_per_participant"):
        bonus(batch, "--top-up-hourly", "12")
