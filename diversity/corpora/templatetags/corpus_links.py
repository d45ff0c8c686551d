"""``{% query_url 'manage-corpora-query' corpus.name query_id %}``: the link to one query of a
corpus, whatever characters its id holds.

``reverse()`` leaves ``/`` as it is in a ``<path:…>`` argument, so an id such as ``q/../x``
would give ``…/query/q/../x``, which a browser (or any client following RFC 3986) shortens
to ``…/query/x`` before asking: another query, or none. Here the id is percent-encoded
whole (``q%2F..%2Fx``): no ``/`` is left, so no dot segment either; the server hands the
view the decoded id. An id that is exactly ``.`` or ``..`` is a dot segment however it is
encoded (browsers read ``%2E`` as ``.``), so it goes in the query string instead
(``…/query/?id=..``), which the same views read.
"""

from urllib.parse import quote, urlencode

from django import template
from django.urls import reverse

register = template.Library()

# Stands for the id in the reversed route; must be a valid id and appear in no other part.
_PLACEHOLDER = "0query-id0"
DOT_SEGMENTS = (".", "..")


@register.simple_tag
def query_url(route: str, corpus_name: str, query_id: str) -> str:
    """The path of ``route`` (a ``<name>`` … ``<path:query_id>`` route) for this query."""
    if query_id in DOT_SEGMENTS:
        return (
            reverse(f"{route}-by-parameter", args=[corpus_name]) + "?" + urlencode({"id": query_id})
        )
    path = reverse(route, args=[corpus_name, _PLACEHOLDER])
    head, tail = path.rsplit(_PLACEHOLDER, 1)
    return head + quote(query_id, safe="") + tail
