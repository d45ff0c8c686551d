"""Errors a user can cause. Services of every app raise them; views and commands render them.

The API renders them through ``core.api.errors.exception_handler``; pages and commands show
``str(error)``, which is always a message the user can act on."""

import re

# "field: message": how a service error names what it is about (``slug: a batch 'x'
# already exists``); a dotted path for a nested field (``kind_settings.max_words``)
_NAMED_FIELD = re.compile(r"([a-z_][a-z0-9_]*(?:\.[a-z0-9_]+)*): \S")


class ServiceError(Exception):
    """Base class; ``str(error)`` is a message the user can act on. ``code``, where set, is
    a stable word a client can act on without reading the message (the API's ``code``)."""

    code = ""


def field_named(error: ServiceError) -> str:
    """The field an error is about: an ``InvalidInput``'s own, else the one its message
    starts with (``field: message``), else ``""``."""
    if isinstance(error, InvalidInput):
        return error.field
    found = _NAMED_FIELD.match(str(error))
    return found.group(1) if found else ""


class InvalidInput(ServiceError):
    """A value is malformed or out of range; ``field`` names it."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class NotFound(ServiceError):
    """The thing does not exist, or is not the caller's (the two look the same)."""


class Conflict(ServiceError):
    """The request contradicts what is already stored."""

    def __init__(self, message: str, *, code: str = ""):
        super().__init__(message)
        self.code = code


class Unavailable(ServiceError):
    """The thing exists but does not serve this request in its current state."""

    def __init__(self, state: str, message: str, *, retry_after: int | None = None):
        super().__init__(message)
        self.state = state
        # a state that passes (a paused batch): when to ask again (``Retry-After``)
        self.retry_after = retry_after


class TooLarge(ServiceError):
    """The request is larger than this way of sending it accepts (413); the message says
    which way takes it."""


class TemporarilyUnavailable(ServiceError):
    """A service the request needs (the database, the job queue) does not answer now.

    Rendered as 503 with ``Retry-After: retry_after`` so that clients wait and try again.
    """

    def __init__(self, message: str, retry_after: int = 5):
        super().__init__(message)
        self.retry_after = retry_after
