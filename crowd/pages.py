"""What the crowd app adds to the batch pages (through ``core.extensions``): a **Review**
tab, a **Fair pay** panel on the overview, a platform-status column in the annotators
table, and a "Pay" section in the data card."""

from annotation.models import Participation
from core.extensions import (
    CardSection,
    Column,
    Panel,
    Tab,
    register_card_section,
    register_column,
    register_panel,
    register_tab,
)
from crowd import access
from crowd.services.fairpay import RATES_READ_ON, card_lines, fair_pay


def _fair_pay_context(request, batch, state: dict) -> dict:
    return {"pay": fair_pay(batch), "rates_read_on": RATES_READ_ON}


def _platform_status(batch) -> dict[str, str]:
    return dict(
        Participation.objects.filter(batch=batch)
        .exclude(platform_status="")
        .values_list("annotator__pseudonym", "platform_status")
    )


def register_extensions() -> None:
    register_tab("batch", Tab("Review", "manage-batch-review", access.can_view_review, order=60))
    register_panel(
        "batch",
        Panel(
            "fair-pay", "crowd/panels/fair_pay.html", _fair_pay_context, access.can_view_review, 60
        ),
    )
    register_column(
        "annotators",
        Column(
            "platform_status",
            "Platform status",
            _platform_status,
            title=lambda batch: "The crowd platform's status of the person's submission",
            order=60,
        ),
    )
    register_card_section("batch", CardSection("pay", card_lines, order=60))
