"""Errors a user can cause. Services of every app raise them; views and commands render them.

The API renders them through ``core.api.errors.exception_handler``; pages and commands show
``str(error)``, which is always a message the user can act on."""


class ServiceError(Exception):
    """Base class; ``str(error)`` is a message the user can act on. ``code``, where set, is
    a stable word a client can act on without reading the message (the API's ``code``)."""

    code = ""


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
