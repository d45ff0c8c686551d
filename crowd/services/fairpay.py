"""Fair pay: the effective hourly pay of a batch's reward, from measured active time.

Active time of a participant: ``crowd.services.active_time`` (the same measure as the
hourly top-up bonus). The figure that matters is the **median**
over participants with at least one timed label — Prolific judges a study's reward per
hour by the median completion time too. Effective hourly pay = reward_per_participant ÷
median active hours. It is compared with Prolific's rates for GBP and USD (researcher
help, "Prolific's payment principles", read 2026-12-01): minimum £6.00 / $8.00 per hour,
recommended at least £9.00 / $12.00 per hour. Our active time leaves out reading the
instructions and the consent, so the real hourly pay is lower than shown.
"""

import statistics
from dataclasses import dataclass
from decimal import Decimal

from annotation.models import Batch
from crowd.services.active_time import active_ms_by_annotator

PROLIFIC_RATES = {
    # currency: (minimum, recommended) per hour
    "GBP": (Decimal("6.00"), Decimal("9.00")),
    "USD": (Decimal("8.00"), Decimal("12.00")),
}
RATES_READ_ON = "2026-12-01"


@dataclass(frozen=True)
class FairPay:
    participants: int
    median_active_seconds: float | None
    reward: Decimal | None
    currency: str
    hourly: Decimal | None
    minimum: Decimal | None
    recommended: Decimal | None
    verdict: str  # "below_minimum", "below_recommended", "fair", "unknown"


def fair_pay(batch: Batch) -> FairPay:
    totals = list(active_ms_by_annotator(batch).values())
    median = statistics.median(totals) / 1000 if totals else None
    reward, currency = batch.reward_per_participant, (batch.reward_currency or "").upper()
    minimum, recommended = PROLIFIC_RATES.get(currency, (None, None))
    hourly = None
    if reward is not None and median:
        hourly = (reward / Decimal(str(median)) * 3600).quantize(Decimal("0.01"))
    if hourly is None or minimum is None:
        verdict = "unknown"
    elif hourly < minimum:
        verdict = "below_minimum"
    elif hourly < recommended:
        verdict = "below_recommended"
    else:
        verdict = "fair"
    return FairPay(len(totals), median, reward, currency, hourly, minimum, recommended, verdict)


def card_lines(batch: Batch) -> list[str]:
    """The data card's "Pay" section (nothing for a batch without a reward or times)."""
    figures = fair_pay(batch)
    if figures.reward is None and figures.median_active_seconds is None:
        return []
    lines = ["", "## Pay", ""]
    if figures.reward is not None:
        lines.append(f"- Reward per participant: {figures.reward} {figures.currency}".rstrip())
    if figures.median_active_seconds is not None:
        lines.append(
            f"- Median active time per participant: {figures.median_active_seconds / 60:.1f} min "
            f"(sum of label durations, {figures.participants} participants)"
        )
    if figures.hourly is not None:
        lines.append(f"- Effective hourly pay: {figures.hourly} {figures.currency} per hour")
    if figures.minimum is not None:
        lines.append(
            f"- Prolific's rates ({RATES_READ_ON}): minimum {figures.minimum}, recommended "
            f"{figures.recommended} {figures.currency} per hour — this batch: "
            f"{figures.verdict.replace('_', ' ')}"
        )
    return lines
