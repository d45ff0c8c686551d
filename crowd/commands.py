"""What the ``prolific`` and ``mturk`` commands share: the batch, the tables, the errors."""

from decimal import Decimal

from django.core.management.base import CommandError

from annotation.models import Batch
from crowd.models import BonusRun


def batch_or_error(slug: str) -> Batch:
    batch = Batch.objects.filter(slug=slug).first()
    if batch is None:
        raise CommandError(f"batch '{slug}' does not exist")
    return batch


def review_table(proposals) -> list[str]:
    if not proposals:
        return ["No submission is awaiting review."]
    lines = ["submission\tannotator\titems\tfailed checks\tproposed\tsent\treason"]
    for p in proposals:
        lines.append(
            f"{p.submission_id}\t{p.annotator or '-'}\t{p.items_done}\t{p.checks_failed}\t"
            f"{p.action}\t{p.state or '-'}\t{p.reason}"
        )
    counts = {}
    for p in proposals:
        counts[p.action] = counts.get(p.action, 0) + 1
    lines.append("Proposed: " + ", ".join(f"{a} {n}" for a, n in sorted(counts.items())))
    return lines


def bonus_table(rows, currency: str) -> list[str]:
    lines = ["participant\tannotator\tpaid labels\tactive min\tearned\talready\towed"]
    for row in rows:
        lines.append(
            f"{row.participant_id}\t{row.annotator}\t{row.paid_labels}\t"
            f"{row.active_ms / 60000:.1f}\t{row.earned}\t{row.already}\t{row.owed}"
        )
    owed = [row for row in rows if row.owed > 0]
    total = sum((row.owed for row in owed), Decimal(0))
    lines.append(
        f"Total to pay: {total:.2f} {currency}".rstrip()
        + f" to {len(owed)} participant{'s' if len(owed) != 1 else ''} (before platform fees)"
    )
    return lines


def basis_and_rate(options) -> tuple[str, Decimal]:
    if options.get("per_item") is not None:
        return BonusRun.Basis.PER_ITEM, options["per_item"]
    if options.get("top_up_hourly") is not None:
        return BonusRun.Basis.TOP_UP_HOURLY, options["top_up_hourly"]
    raise CommandError("give --per-item AMOUNT or --top-up-hourly RATE")
