"""The client's network address, also behind the reverse proxy.

``CLIENT_IP_HEADER`` names the request header the proxy sets (``HTTP_X_REAL_IP`` with the
compose file's nginx); without it the connection's own address is used. Only set it when
every request comes through that proxy: a client reaching the app directly could forge it.
"""

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest | None) -> str:
    """The address the request came from, or ``""`` when unknown."""
    if request is None:
        return ""
    header = settings.CLIENT_IP_HEADER
    if header and request.META.get(header):
        return request.META[header].split(",")[0].strip()
    return request.META.get("REMOTE_ADDR", "") or ""
