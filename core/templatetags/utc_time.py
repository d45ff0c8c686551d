"""``{{ moment|utc }}``: the staff pages' one way of writing a time, ``2026-03-01 14:05 UTC``.

The same format as ``static/annotation/staff.js`` (``utcMinute``) writes, so a time the
server rendered and one the page's script updated read alike, whatever the browser's
time zone or the server's ``TIME_ZONE``.
"""

from datetime import UTC, datetime

from django import template

register = template.Library()

FORMAT = "%Y-%m-%d %H:%M UTC"
DAY_FORMAT = "%Y-%m-%d"


@register.filter
def utc(moment: datetime | None) -> str:
    """An aware datetime as ``YYYY-MM-DD HH:MM UTC``; empty for ``None``."""
    if not moment:
        return ""
    return moment.astimezone(UTC).strftime(FORMAT)


@register.filter
def utc_day(moment: datetime | None) -> str:
    """The UTC day of an aware datetime, ``YYYY-MM-DD`` (a narrow column's short form;
    the full time goes in its ``title``); empty for ``None``."""
    if not moment:
        return ""
    return moment.astimezone(UTC).strftime(DAY_FORMAT)
