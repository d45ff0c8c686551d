"""A participant's **active time** in a batch (SPEC.md, "Bonuses"), in one place: what the
``top_up_hourly`` bonus pays for and what the fair-pay figures take the median of.

It is the sum of their labels' ``duration_ms`` — the time the rating page measured between
showing an item and sending its label (checks and repeats included) — each counted for at
most the time its lease existed before the label arrived (``submitted_at - leased_at``,
both the server's clock). The page shows an item only once it is leased, so a longer time
was not spent on it; a body that claims more (edited by hand, or a browser clock gone
wrong) is not paid for the difference. The label keeps the time as the page sent it.
"""

from django.db.models import F, Func, IntegerField, Q, Sum, Value
from django.db.models.functions import Greatest, Least

from annotation.models import Batch, Label


class _ElapsedMs(Func):
    """Whole milliseconds from the first datetime expression to the second."""

    output_field = IntegerField()

    def as_postgresql(self, compiler, connection, **extra):
        template = "FLOOR(EXTRACT(EPOCH FROM (%(expressions)s)) * 1000)::integer"
        return self.as_sql(compiler, connection, template=template, arg_joiner=" - ", **extra)

    def as_sqlite(self, compiler, connection, **extra):
        # Django keeps datetimes as UTC text that julianday() reads; days -> milliseconds
        template = "CAST(ROUND((julianday(%(expressions)s)) * 86400000) AS INTEGER)"
        return self.as_sql(
            compiler, connection, template=template, arg_joiner=") - julianday(", **extra
        )


def counted_duration():
    """A label's ``duration_ms`` as active time counts it (the module docstring), for a
    ``Label`` query of labels that have one: where the page sent none, PostgreSQL's LEAST
    would give the elapsed time (it skips a NULL), so callers filter those out."""
    elapsed = _ElapsedMs(F("submitted_at"), F("assignment__leased_at"))
    return Least(F("duration_ms"), Greatest(Value(0), elapsed))


def active_ms_by_annotator(batch: Batch) -> dict[int, int]:
    """``annotator pk -> active milliseconds`` of everyone with a timed label in the batch."""
    rows = (
        Label.objects.filter(batch=batch)
        .values("annotator_id")
        .annotate(active=Sum(counted_duration(), filter=Q(duration_ms__isnull=False)))
    )
    return {row["annotator_id"]: int(row["active"] or 0) for row in rows if row["active"]}
