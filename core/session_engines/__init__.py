"""Django's database session engines (``db``, ``cached_db``), making a new session with
one statement instead of two.

Django picks a new session's key by asking whether the key is taken (a query) and then
inserts the session with ``must_create``, which refuses a taken key anyway (the primary
key) and makes Django pick another. The first question is left out: a key is 32 random
characters of 36, and the insert still guarantees uniqueness. It was a statement on every
newcomer's entry page (``bench/crowd``), the request a study's launch brings by the
hundred.
"""

from django.contrib.sessions.backends.base import VALID_KEY_CHARS
from django.utils.crypto import get_random_string


def new_session_key() -> str:
    return get_random_string(32, VALID_KEY_CHARS)
