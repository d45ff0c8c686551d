"""The client's network address, also behind the reverse proxy.

``CLIENT_IP_HEADER`` names the request header the proxy sets (``HTTP_X_REAL_IP`` with the
compose file's nginx); without it the connection's own address is used. Only set it when
every request comes through that proxy: a client reaching the app directly could forge it.
A header that holds no address (nginx always sets one) is ignored: what this returns is
stored in an address column (``Participation.entry_ip``, an ``inet`` on PostgreSQL).
"""

import ipaddress

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest | None) -> str:
    """The address the request came from, or ``""`` when unknown."""
    if request is None:
        return ""
    header = settings.CLIENT_IP_HEADER
    if header:
        forwarded = _address(request.META.get(header, "").split(",")[0])
        if forwarded:
            return forwarded
    return _address(request.META.get("REMOTE_ADDR", ""))


def _address(text: str) -> str:
    """``text`` as a normalised IP address, or ``""`` when it is none."""
    try:
        address = ipaddress.ip_address(text.strip())
    except ValueError:
        return ""
    return str(address).split("%")[0]  # PostgreSQL's inet takes no IPv6 zone (fe80::1%eth0)
