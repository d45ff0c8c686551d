"""The value rules a batch's settings obey, each a function ``rule(field, value)`` that
raises ``InvalidInput`` naming the field. Used by the settings' declarations
(``annotation.settings_spec``) and by the batch services (``services.batches``), so the
pages, the API, Django's admin and the command line accept and refuse the same values.
"""

import re
from decimal import Decimal, InvalidOperation

from django.conf import settings
from django.core.exceptions import ValidationError
from django.core.validators import URLValidator

from core.errors import InvalidInput
from core.text import check_text

# The database's limits (PositiveIntegerField, the columns' max_length) and the pages'.
MAX_INTEGER = 2_147_483_647
MAX_TITLE_CHARS = 300
MAX_CODE_CHARS = 100
MAX_URL_CHARS = 500
MAX_BUTTON_TEXT_CHARS = 100
MAX_MARKDOWN_CHARS = 100_000
URL_SCHEMES = ["http", "https"]
MAX_WAIT_SECONDS = 3600
MAX_REWARD = Decimal("10000")
STUDY_ID_PATTERN = re.compile(r"^[A-Za-z0-9]{1,100}$")
CURRENCY_PATTERN = re.compile(r"^[A-Z]{3}$")
FLAG_POLICIES = ("flag", "exclude")
# the crowd platforms an invitation-only batch may still admit (``accept_platforms``)
CROWD_PLATFORMS = ("prolific", "mturk")


def positive(field: str, value) -> None:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise InvalidInput(field, f"must be a positive integer, got {value!r}")
    if value > MAX_INTEGER:
        raise InvalidInput(field, f"must be at most {MAX_INTEGER}, got {value!r}")


def optional_positive(field: str, value) -> None:
    if value is not None:
        positive(field, value)


def line(field: str, value, max_chars: int) -> None:
    """A one-line text: a string, at most ``max_chars``, no control characters."""
    if not isinstance(value, str):
        raise InvalidInput(field, "must be text")
    if len(value) > max_chars:
        raise InvalidInput(field, f"is {len(value)} characters long; at most {max_chars}")
    check_text(field, value)


def code(field: str, value) -> None:
    line(field, value, MAX_CODE_CHARS)


def markdown(field: str, value) -> None:
    if not isinstance(value, str):
        raise InvalidInput(field, "must be text")
    if len(value) > MAX_MARKDOWN_CHARS:
        raise InvalidInput(field, f"is {len(value)} characters long; at most {MAX_MARKDOWN_CHARS}")
    check_text(field, value, multiline=True)


def url(field: str, value) -> None:
    """Empty, or an http(s) address: the end page's button leads there, so a
    ``javascript:`` or ``data:`` URL would run in the worker's page."""
    line(field, value, MAX_URL_CHARS)
    if not value:
        return
    try:
        URLValidator(schemes=URL_SCHEMES)(value)
    except ValidationError as error:
        raise InvalidInput(
            field, f"{value[:80]!r} is not a web address (http:// or https:// only)"
        ) from error


def flag(field: str, value) -> None:
    if not isinstance(value, bool):
        raise InvalidInput(field, f"must be true or false, got {value!r}")


def share(field: str, value) -> None:
    if value is None:
        return
    if isinstance(value, bool) or not isinstance(value, int | float) or not 0 < value <= 1:
        raise InvalidInput(field, f"must be a share between 0 and 1, got {value!r}")


def flag_policy(field: str, value) -> None:
    if value not in FLAG_POLICIES:
        raise InvalidInput(field, f"must be one of {', '.join(FLAG_POLICIES)}, got {value!r}")


def platforms(field: str, value) -> None:
    if not isinstance(value, list) or not all(isinstance(name, str) for name in value):
        raise InvalidInput(field, "must be a list of platform names")
    unknown = sorted(set(value) - set(CROWD_PLATFORMS))
    if unknown:
        raise InvalidInput(field, f"{unknown[0]!r} is not one of {', '.join(CROWD_PLATFORMS)}")
    if len(set(value)) != len(value):
        raise InvalidInput(field, "names a platform twice")


def seconds(field: str, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_WAIT_SECONDS:
        raise InvalidInput(
            field, f"must be a whole number of seconds from 0 to {MAX_WAIT_SECONDS}, got {value!r}"
        )


def study_id(field: str, value) -> None:
    line(field, value, MAX_CODE_CHARS)
    if value and not STUDY_ID_PATTERN.match(value):
        raise InvalidInput(field, f"{value[:40]!r} is not a Prolific study id (letters and digits)")


def reward(field: str, value) -> None:
    if value is None:
        return
    try:
        amount = Decimal(str(value))
    except InvalidOperation as wrong:
        raise InvalidInput(field, f"must be an amount such as 2.50, got {_shown(value)}") from wrong
    if not amount.is_finite() or amount < 0 or amount > MAX_REWARD:
        raise InvalidInput(field, f"must be an amount from 0 to {MAX_REWARD}, got {_shown(value)}")
    if amount != amount.quantize(Decimal("0.01")):
        raise InvalidInput(field, f"has more than two decimal places: {_shown(value)}")


def _shown(value) -> str:
    """An amount as the user wrote it (a Decimal the API parsed reads 2.50, not
    Decimal('2.50'))."""
    return str(value) if isinstance(value, Decimal) else repr(value)


def language_codes() -> list[str]:
    """The codes of the languages the platform ships (``settings.LANGUAGES``)."""
    return [code for code, _ in settings.LANGUAGES]


def language(field: str, value) -> None:
    """Empty (the first offered language, else English) or a shipped language's code."""
    if not isinstance(value, str) or (value and value not in language_codes()):
        raise InvalidInput(
            field, f"must be one of {', '.join(language_codes())} (or empty), got {value!r}"
        )


def languages(field: str, value) -> None:
    """A list of distinct shipped languages' codes (empty: the default language only)."""
    if not isinstance(value, list) or not all(isinstance(code, str) for code in value):
        raise InvalidInput(field, "must be a list of language codes")
    unknown = [code for code in value if code not in language_codes()]
    if unknown:
        raise InvalidInput(field, f"{unknown[0]!r} is not one of {', '.join(language_codes())}")
    if len(set(value)) != len(value):
        raise InvalidInput(field, "names a language twice")


def currency(field: str, value) -> None:
    if not isinstance(value, str) or (value and not CURRENCY_PATTERN.match(value)):
        raise InvalidInput(
            field, f"must be a three-letter currency code such as GBP, got {value!r}"
        )


BUNDLE_ORDERS = ("random", "balanced", "imported")


def bundle_by(field: str, value) -> None:
    """``none``, ``query`` or ``meta:KEY`` with an item metadata key."""
    line(field, value, 210)
    if value in ("none", "query"):
        return
    key = value.removeprefix("meta:") if isinstance(value, str) else ""
    if not value.startswith("meta:") or not key.strip():
        raise InvalidInput(
            field, f"must be none, query or meta:KEY (an item metadata key), got {value!r}"
        )


def bundle_order(field: str, value) -> None:
    if value not in BUNDLE_ORDERS:
        raise InvalidInput(field, f"must be one of {', '.join(BUNDLE_ORDERS)}, got {value!r}")


COMMENT_BOXES = ("none", "optional")
MAX_COMMENT_CHARS = 2000


def comment_box(field: str, value) -> None:
    if value not in COMMENT_BOXES:
        raise InvalidInput(field, f"must be one of {', '.join(COMMENT_BOXES)}, got {value!r}")
