"""Fair pay on the batch page and in the data card."""

from decimal import Decimal

import pytest

from annotation.services.batches import update_batch
from annotation.services.exports.card import data_card
from crowd.services.fairpay import fair_pay
from tests.crowd.helpers import label_items, prolific_batch, prolific_participant
from tests.staff import staff_client

pytestmark = pytest.mark.django_db


def priced(prolific, reward: str, currency="GBP"):
    batch = prolific_batch(prolific, n_items=6, per_item=3)
    for pid, count in (("a", 2), ("b", 4), ("c", 6)):
        person, _ = prolific_participant(batch, prolific, pid)
        label_items(batch, person, count, duration_ms=60_000)
    return update_batch(
        batch, {"reward_per_participant": Decimal(reward), "reward_currency": currency}
    )


def test_the_hourly_pay_is_the_reward_over_the_median_active_time(prolific):
    batch = priced(prolific, "0.40")  # median 4 minutes → 6.00 per hour
    figures = fair_pay(batch)
    assert figures.median_active_seconds == 240
    assert figures.hourly == Decimal("6.00") and figures.verdict == "below_recommended"


@pytest.mark.parametrize(
    ("reward", "shown"),
    [("0.30", "Below Prolific's minimum of 6.00 GBP"), ("0.80", "At or above")],
)
def test_the_batch_page_warns_below_the_minimum(prolific, reward, shown):
    batch = priced(prolific, reward)
    page = staff_client("researcher").get(f"/manage/{batch.slug}/").content.decode()
    assert "Fair pay" in page and "Median active time per participant" in page
    assert shown in page


def test_the_data_card_reports_the_pay(prolific):
    batch = priced(prolific, "0.30", "USD")
    card = data_card(batch)
    assert "## Pay" in card
    assert "Effective hourly pay: 4.50 USD per hour" in card
    assert "minimum 8.00" in card and "below minimum" in card
