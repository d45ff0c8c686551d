"""Two requests paying the same batch's bonuses at once (a double click, a client's retry,
two admins) pay each participant once: what is owed is planned under the batch's lock,
and each step of a run is taken only from the state it expects."""

import threading
from decimal import Decimal

import pytest
from django.db import connection

from core.audit import Actor
from core.errors import Conflict
from crowd.models import BonusRun, Platform
from crowd.services import bonuses
from crowd.services.prolific_client import ProlificClient
from crowd.services.submissions import sync_prolific
from tests.crowd.helpers import label_items, prolific_batch, prolific_participant
from tests.crowd.test_bonuses import assert_paid

ACTOR = Actor.command_line()
RATE = Decimal("0.50")


def _owed_crowd(prolific):
    batch = prolific_batch(prolific, n_items=4, per_item=1)
    alice, _ = prolific_participant(batch, prolific, "alice", status="APPROVED")
    label_items(batch, alice, 2)
    sync_prolific(batch, ProlificClient())
    return batch


def _pay(batch, client):
    return bonuses.pay_owed(batch, Platform.PROLIFIC, "per_item", RATE, client=client, actor=ACTOR)


def _during(client, method: str, other):
    """``client`` calls ``other()`` right after its own ``method`` answered."""
    real = getattr(client, method)
    outcome = {}

    def then_the_other(*args):
        answer = real(*args)
        try:
            outcome["value"] = other()
        except Conflict as refused:
            outcome["refused"] = str(refused)
        return answer

    setattr(client, method, then_the_other)
    return outcome


@pytest.mark.django_db
def test_a_second_payment_during_the_first_set_up_pays_once(prolific):
    batch = _owed_crowd(prolific)
    first = ProlificClient()
    second = _during(first, "set_up_bonuses", lambda: _pay(batch, ProlificClient()))
    # the second abandons the first's run (set up, not yet paid) and pays; the first,
    # finding its run abandoned, stops before its pay request
    with pytest.raises(Conflict, match="another request is settling it"):
        _pay(batch, first)
    assert second["value"][1].state == BonusRun.State.PAID
    assert_paid(prolific, batch, alice="1.00")
    assert len(prolific.writes("/api/v1/bulk-bonus-payments/")) == 1
    assert sorted(BonusRun.objects.values_list("state", flat=True)) == ["abandoned", "paid"]


@pytest.mark.django_db
def test_a_second_payment_while_the_first_is_paying_sends_nothing(prolific):
    batch = _owed_crowd(prolific)
    first = ProlificClient()
    second = _during(first, "pay_bonuses", lambda: _pay(batch, ProlificClient()))
    _rows, run = _pay(batch, first)
    assert run.state == BonusRun.State.PAID
    assert "may have paid" in second["refused"]  # the first's run was PAYING
    assert_paid(prolific, batch, alice="1.00")
    assert len(prolific.writes("/api/v1/submissions/bonus-payments/")) == 1


@pytest.mark.django_db(transaction=True)
def test_requests_at_the_same_moment_pay_once(prolific):
    if connection.vendor != "postgresql":
        pytest.skip("threads at once need PostgreSQL's row locks")
    batch = _owed_crowd(prolific)
    start = threading.Barrier(3)
    outcomes = []

    def pay():
        try:
            start.wait()
            outcomes.append(_pay(batch, ProlificClient())[1])
        except Conflict as refused:
            outcomes.append(refused)
        finally:
            connection.close()

    threads = [threading.Thread(target=pay) for _ in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(outcomes) == 3
    assert_paid(prolific, batch, alice="1.00")
    assert len(prolific.writes("/api/v1/bulk-bonus-payments/")) == 1
    paid = [run for run in outcomes if isinstance(run, BonusRun)]
    assert [run.state for run in paid] == [BonusRun.State.PAID]  # the others: nothing owed
