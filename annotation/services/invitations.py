"""Personal invitation links: signed tokens that carry the invitee's id.

``/work/<slug>/?invite=<token>`` enters as the invitee the token names; the signature
(Django's signing, keyed by ``SECRET_KEY`` and salted with the batch) means nobody can
make up a valid token. A batch with ``invitations_required`` refuses plain
``?worker=<id>`` links, so its annotators are exactly the invited people. Prolific and
MTurk links are unaffected: those platforms vouch for their worker ids.
"""

import secrets
from urllib.parse import urlencode

from django.core import signing

from annotation.models import Batch
from core.errors import InvalidInput

MAX_INVITATIONS = 10_000


def _signer(batch: Batch) -> signing.Signer:
    return signing.Signer(salt=f"annotation.invitation:{batch.slug}")


def invitation_token(batch: Batch, invitee: str) -> str:
    return _signer(batch).sign(invitee)


def invitee_of(batch: Batch, token: str) -> str:
    """The invitee a token names; ``InvalidInput`` on ``invite`` when it is not genuine."""
    try:
        return _signer(batch).unsign(token or "")
    except signing.BadSignature as forged:
        raise InvalidInput(
            "invite", "this invitation link is not valid for this study (check the link)"
        ) from forged


def new_invitations(batch: Batch, count: int, prefix: str = "invitee") -> list[tuple[str, str]]:
    """``count`` fresh (invitee id, token) pairs with unguessable ids."""
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_INVITATIONS:
        raise InvalidInput("count", f"must be between 1 and {MAX_INVITATIONS}")
    prefix = (prefix or "invitee").strip()[:40]
    pairs = []
    for _ in range(count):
        invitee = f"{prefix}-{secrets.token_hex(5)}"
        pairs.append((invitee, invitation_token(batch, invitee)))
    return pairs


def invitation_table(entry_url: str, pairs: list[tuple[str, str]]) -> tuple[list[str], list]:
    """The invitations CSV's columns and rows: each invitee and their link, the token
    URL-encoded (a prefix may hold ``&``, ``#`` or spaces, which would cut the link)."""
    return ["invitee", "link"], [
        [invitee, f"{entry_url}?{urlencode({'invite': token})}"] for invitee, token in pairs
    ]
