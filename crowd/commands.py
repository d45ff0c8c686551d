"""What the ``prolific`` and ``mturk`` commands share: the batch, the tables, the errors."""

from decimal import Decimal, InvalidOperation

from django.core.management.base import CommandError

from annotation.models import Batch
from core.commands import existing
from crowd.models import BonusRun


def amount(text: str) -> Decimal:
    """An amount of money given on the command line (argparse's ``type``)."""
    try:
        return Decimal(text)
    except InvalidOperation as wrong:
        raise CommandError(f"{text!r} is not an amount") from wrong


def action_parsers(parser, actions: tuple[str, ...], platform: str):
    """One sub-command per action, each taking the batch's slug; all but ``sync`` change
    nothing on the platform without ``--apply``. Returns the sub-parsers by name."""
    sub = parser.add_subparsers(dest="action", required=True)
    for name in actions:
        command = sub.add_parser(name)
        command.add_argument("slug")
        if name != "sync":
            command.add_argument("--apply", action="store_true", help=f"change it on {platform}")
    return sub.choices


def bonus_basis_arguments(bonus_parser, *, required: bool):
    """``--per-item AMOUNT`` or ``--top-up-hourly RATE`` (one of them); returns the group."""
    group = bonus_parser.add_mutually_exclusive_group(required=required)
    group.add_argument("--per-item", type=amount, metavar="AMOUNT")
    group.add_argument("--top-up-hourly", type=amount, metavar="RATE")
    return group


def batch_or_error(slug: str) -> Batch:
    return existing(Batch, "batch", slug=slug)


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
