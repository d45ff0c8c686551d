"""The Prolific client against the fake: token, retries on 429 and 5xx, timeouts, and
the pay request that is never repeated."""

import time

import pytest

from crowd.models import PlatformCall
from crowd.services.prolific_client import Ambiguous, ProlificClient, ProlificError
from tests.crowd.helpers import STUDY

pytestmark = pytest.mark.django_db


def test_every_request_carries_the_token_and_a_wrong_token_is_refused(prolific):
    prolific.add_study(STUDY)
    assert ProlificClient().study(STUDY)["status"] == "ACTIVE"
    assert prolific.calls[-1].authorised
    with pytest.raises(ProlificError) as refused:
        ProlificClient(token="wrong").study(STUDY)
    assert refused.value.status == 401


def test_a_429_is_retried_after_the_retry_after_it_names(prolific):
    prolific.add_study(STUDY)
    prolific.fail("POST", f"/api/v1/studies/{STUDY}/transition/", "429", retry_after=1)
    started = time.monotonic()
    ProlificClient().transition_study(STUDY, "PAUSE")
    assert time.monotonic() - started >= 1.0
    assert [c.answered for c in prolific.writes()] == [429, 200]
    assert prolific.studies[STUDY]["status"] == "PAUSED"
    # both attempts of the write are recorded
    assert list(PlatformCall.objects.order_by("pk").values_list("attempt", "status_code")) == [
        (1, 429),
        (2, 200),
    ]


def test_a_5xx_before_anything_happened_is_retried_for_a_repeatable_call(prolific):
    prolific.add_study(STUDY, places=5)
    prolific.fail("PATCH", f"/api/v1/studies/{STUDY}/", "500", times=2)
    ProlificClient().set_places(STUDY, 8)
    assert prolific.studies[STUDY]["total_available_places"] == 8
    assert [c.answered for c in prolific.writes()] == [500, 500, 200]


def test_the_pay_request_is_never_repeated_after_an_unclear_failure(prolific):
    prolific.add_study(STUDY)
    prolific.add_submission(STUDY, "p1", status="APPROVED")
    client = ProlificClient()
    bulk = client.set_up_bonuses(STUDY, {"p1": 1})
    prolific.fail("POST", f"/api/v1/bulk-bonus-payments/{bulk['id']}/pay/", "timeout_after")
    with pytest.raises(Ambiguous):
        client.pay_bonuses(bulk["id"])
    assert len(prolific.writes("/api/v1/bulk-bonus-payments/")) == 1
    assert len(prolific.payments) == 1  # it did take effect: hence never sent again
    assert PlatformCall.objects.get(path__contains="/pay/").error.startswith("TimeoutError")


def test_a_refusal_is_not_retried_and_says_why(prolific):
    prolific.add_study(STUDY)
    with pytest.raises(ProlificError, match="cannot APPROVE"):
        prolific.add_submission(STUDY, "p1", status="ACTIVE")
        ProlificClient().transition_submission("sub-p1", "APPROVE")
    assert len(prolific.writes()) == 1
