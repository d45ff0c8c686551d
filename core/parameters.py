"""Parameters of a job or a command as users give them (a form, JSON, the command line):
checked and converted once, refused with an ``InvalidInput`` that names the field."""

from core.errors import InvalidInput


def integer_parameter(field: str, value, low: int, high: int | None) -> int:
    """``value`` as an integer in [low, high] (``high`` None: no upper bound); digits in a
    string are accepted, booleans and fractions are not."""
    if isinstance(value, str) and value.strip().isdigit():
        value = int(value.strip())
    if isinstance(value, bool) or not isinstance(value, int):
        raise InvalidInput(field, f"must be an integer, got {value!r}")
    if value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise InvalidInput(field, f"must be {bounds}, got {value}")
    return value


def flag_parameter(field: str, value) -> bool:
    """``value`` as true or false (a checkbox, JSON, or 1/0, yes/no, on/off)."""
    if isinstance(value, bool):
        return value
    if value in (None, "", 0, "0", "false", "off", "no"):
        return False
    if value in (1, "1", "true", "on", "yes"):
        return True
    raise InvalidInput(field, f"must be true or false, got {value!r}")
