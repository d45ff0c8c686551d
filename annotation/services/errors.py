"""Errors a user can cause. Services raise them; views and commands render them."""


class ServiceError(Exception):
    """Base class; ``str(error)`` is a message the user can act on."""


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


class BatchUnavailable(ServiceError):
    """The batch does not hand out work in its current state."""

    def __init__(self, batch_state: str, message: str):
        super().__init__(message)
        self.batch_state = batch_state
