"""Bonus arithmetic at its edges (SPEC.md, "Crowd platforms", "Bonuses"):

* paid only to participants the platform shows taking part **and not excluded**: an
  excluded participant whose submission Prolific shows ``APPROVED`` gets no top-up (nor a
  per-item bonus);
* amounts rounded half-up to the cent, once, on what is paid: 0.005 per item is 0.01 for
  one label and 0.02 (0.015) for three — not 0.03, as when the rate itself is rounded;
* a failed set-up pays nothing and abandons the run; the next run pays exactly what is
  owed (the abandoned lines were never paid, so they are not subtracted);
* a top-up subtracts every bonus already paid, including an earlier per-item one;
* ``per_item`` pays for counted and surplus labels only: attention checks, repeats and
  "I can't judge this" earn nothing per item.

Through ``manage.py prolific bonus`` against the fake Prolific; what the fake paid and
what the ledger says was paid are compared.
"""

from datetime import timedelta
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import CommandError, call_command
from django.utils import timezone

from annotation.models import Item, Label
from annotation.services.annotators import exclude_annotator
from annotation.services.batches import update_batch
from annotation.services.labelling import submit_label
from annotation.services.leasing import expire_leases, lease_next_item
from crowd.models import BonusLine, BonusRun
from tests.crowd.helpers import label_items, prolific_batch, prolific_participant

pytestmark = pytest.mark.django_db

SET_UP = "/api/v1/submissions/bonus-payments/"
PAY = "/api/v1/bulk-bonus-payments/"


def bonus(batch, *args) -> str:
    out = StringIO()
    call_command("prolific", "bonus", batch.slug, *args, stdout=out)
    return out.getvalue()


def ledger(batch) -> dict[str, Decimal]:
    totals: dict[str, Decimal] = {}
    lines = BonusLine.objects.filter(run__batch=batch, run__state="paid")
    for pid, amount in lines.values_list("participant_id", "amount"):
        totals[pid] = totals.get(pid, Decimal(0)) + amount
    return totals


def assert_paid(prolific, batch, **expected: str) -> None:
    amounts = {participant: Decimal(amount) for participant, amount in expected.items()}
    assert prolific.paid_per_participant() == ledger(batch) == amounts


def with_reward(batch, amount: str):
    update_batch(batch, {"reward_per_participant": Decimal(amount), "reward_currency": "GBP"})
    batch.refresh_from_db()
    return batch


def test_an_excluded_participant_whose_submission_is_approved_gets_no_bonus(prolific):
    batch = with_reward(prolific_batch(prolific, n_items=8, per_item=2), "0.50")
    alice, _ = prolific_participant(batch, prolific, "alice", status="APPROVED")
    eve, _ = prolific_participant(batch, prolific, "eve", status="APPROVED")
    label_items(batch, alice, 3, duration_ms=120_000)  # 6 min at 12/h = 1.20 - 0.50
    label_items(batch, eve, 4, duration_ms=120_000)  # 8 min: would be owed 1.10
    exclude_annotator(batch, eve.annotator, reason="copied answers")
    assert prolific.submissions["sub-eve"]["status"] == "APPROVED"
    preview = bonus(batch, "--top-up-hourly", "12")
    assert "alice" in preview and "eve" not in preview
    bonus(batch, "--top-up-hourly", "12", "--apply")
    (setup,) = prolific.writes(SET_UP)
    assert setup.body["csv_bonuses"] == "alice,0.70\n"
    # a per-item bonus leaves her out too
    bonus(batch, "--per-item", "0.10", "--apply")
    assert_paid(prolific, batch, alice="1.00")  # 0.70 top-up + 3 x 0.10
    assert "eve" not in prolific.paid_per_participant()


def test_half_a_cent_for_one_label_rounds_up_to_a_cent(prolific):
    batch = prolific_batch(prolific, n_items=3, per_item=1)
    one, _ = prolific_participant(batch, prolific, "one-label", status="AWAITING REVIEW")
    assert label_items(batch, one, 1) == 1
    assert "Total to pay: 0.01" in bonus(batch, "--per-item", "0.005")
    bonus(batch, "--per-item", "0.005", "--apply")
    assert_paid(prolific, batch, **{"one-label": "0.01"})


def test_half_a_cent_per_item_is_multiplied_before_it_is_rounded(prolific):
    """SPEC: AMOUNT per label, the amount rounded half-up to the cent: 3 x 0.005 = 0.015."""
    batch = prolific_batch(prolific, n_items=3, per_item=1)
    three, _ = prolific_participant(batch, prolific, "three-labels", status="APPROVED")
    assert label_items(batch, three, 3) == 3
    bonus(batch, "--per-item", "0.005", "--apply")
    assert_paid(prolific, batch, **{"three-labels": "0.02"})


def test_a_400_at_set_up_abandons_the_run_and_the_next_run_pays_correctly(prolific):
    batch = prolific_batch(prolific, n_items=6, per_item=2)
    alice, _ = prolific_participant(batch, prolific, "alice", status="APPROVED")
    bob, _ = prolific_participant(batch, prolific, "bob", status="AWAITING REVIEW")
    label_items(batch, alice, 3)
    label_items(batch, bob, 1)
    prolific.fail("POST", SET_UP, "400")
    with pytest.raises(CommandError, match="nothing paid"):
        bonus(batch, "--per-item", "0.10", "--apply")
    first = BonusRun.objects.get()
    assert first.state == "abandoned" and "set-up failed" in first.detail
    assert prolific.writes(PAY) == [] and prolific.payments == []
    # the next run pays what is owed: neither nothing (as if the lines were paid) nor twice
    assert "Total to pay: 0.40" in bonus(batch, "--per-item", "0.10")
    bonus(batch, "--per-item", "0.10", "--apply")
    second = BonusRun.objects.exclude(pk=first.pk).get()
    assert second.state == "paid"
    assert len(prolific.writes(SET_UP)) == 2 and len(prolific.writes(PAY)) == 1
    assert_paid(prolific, batch, alice="0.30", bob="0.10")
    assert "Nobody is owed anything" in bonus(batch, "--per-item", "0.10", "--apply")


def test_a_top_up_after_a_per_item_bonus_subtracts_it(prolific):
    batch = with_reward(prolific_batch(prolific, n_items=6, per_item=2), "0.50")
    alice, _ = prolific_participant(batch, prolific, "alice", status="APPROVED")
    label_items(batch, alice, 4, duration_ms=150_000)  # 10 min: 2.00 at 12/h
    bonus(batch, "--per-item", "0.25", "--apply")
    assert_paid(prolific, batch, alice="1.00")
    # 2.00 - 0.50 reward - 1.00 already paid per item = 0.50
    assert "Total to pay: 0.50 GBP" in bonus(batch, "--top-up-hourly", "12")
    bonus(batch, "--top-up-hourly", "12", "--apply")
    assert_paid(prolific, batch, alice="1.50")
    assert "Nobody is owed anything" in bonus(batch, "--top-up-hourly", "12", "--apply")


def test_checks_repeats_and_passes_earn_nothing_per_item_surplus_does(prolific):
    """Alice meets attention checks and repeats and passes two items; Bob answers a lease
    after it expired and the item was refilled (surplus). Per item, each is paid for
    their counted and surplus labels only."""
    batch = prolific_batch(
        prolific, n_items=14, per_item=1, check_every=2, repeat_every=2,
        allow_cant_judge=True, lease_seconds=60,
    )  # fmt: skip
    checks = list(Item.objects.filter(batch=batch).order_by("position")[:3])
    Item.objects.filter(pk__in=[item.pk for item in checks]).update(
        is_check=True, gold=[5], target=0
    )
    alice, _ = prolific_participant(batch, prolific, "alice", status="APPROVED")
    bob, _ = prolific_participant(batch, prolific, "bob", status="APPROVED")
    carol, _ = prolific_participant(batch, prolific, "carol", status="APPROVED")
    # Bob's lease expires; Carol takes the item and answers; Bob answers late: surplus
    start = timezone.now()
    late = lease_next_item(batch, bob, start).assignment
    assert late.purpose == "regular"
    later = start + timedelta(seconds=61)
    expire_leases(batch, now=later)
    refill = lease_next_item(batch, carol, later).assignment
    assert refill.item_id == late.item_id
    submit_label(carol.annotator, refill.pk, 4, 2000, later)
    assert submit_label(bob.annotator, late.pk, 4, 2000, later).status == "surplus"
    passes = 0
    for _ in range(40):
        outcome = lease_next_item(batch, alice)
        if outcome.assignment is None:
            break
        lease = outcome.assignment
        if lease.purpose == "regular" and passes < 2:
            submit_label(alice.annotator, lease.pk, None, 2000, cant_judge=True)
            passes += 1
        else:
            submit_label(alice.annotator, lease.pk, 5, 2000)
    statuses = dict.fromkeys(["counted", "check", "repeat", "cant_judge"], 0)
    for status in Label.objects.filter(annotator=alice.annotator).values_list("status", flat=True):
        statuses[status] += 1
    assert statuses["check"] >= 1 and statuses["repeat"] >= 1 and statuses["cant_judge"] == 2
    counted = statuses["counted"]
    assert counted >= 1
    assert sum(statuses.values()) > counted  # she did more than her counted labels
    bonus(batch, "--per-item", "0.10", "--apply")
    cents = Decimal("0.10")
    assert_paid(
        prolific,
        batch,
        alice=str(cents * counted),
        bob="0.10",  # the surplus label
        carol="0.10",
    )
