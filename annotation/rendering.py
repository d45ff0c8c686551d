"""Markdown → safe HTML for queries, responses and instructions.

markdown-it renders CommonMark plus tables, single newlines as line breaks, with raw HTML
disabled (so ``<script>`` in a response arrives as visible text), and nh3 (the ammonia
sanitiser) then strips anything outside its allow-list and gives every link
``rel="noopener noreferrer nofollow"``.

Rendered texts are cached per process, bounded in bytes (``MARKDOWN_CACHE_BYTES``, least
recently used out first): a worker process serving many different long responses keeps
at most that much, and a text larger than a sixteenth of it is rendered every time
instead of pushing everything else out.
"""

import hashlib
import sys
import threading
from collections import OrderedDict

import nh3
from django.conf import settings
from markdown_it import MarkdownIt

# "breaks": a single newline is a line break, as chat interfaces show model output (a
# poem's lines must not run together into one paragraph).
_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True}).enable(
    "table"
)


class ByteBoundedCache:
    """Least-recently-used ``key → str`` map holding at most ``budget()`` bytes of values."""

    def __init__(self, budget):
        self._budget = budget
        self._entries: OrderedDict[bytes, str] = OrderedDict()
        self._sizes: dict[bytes, int] = {}
        self._lock = threading.Lock()  # gthread/threaded servers share the process
        self.bytes = 0

    def get(self, key: bytes) -> str | None:
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: bytes, value: str) -> None:
        budget = self._budget()
        size = sys.getsizeof(value) + sys.getsizeof(key)
        if size > budget // 16:
            return
        with self._lock:
            if key in self._entries:
                return
            self._entries[key] = value
            self._sizes[key] = size
            self.bytes += size
            while self.bytes > budget and self._entries:
                old, _ = self._entries.popitem(last=False)
                self.bytes -= self._sizes.pop(old)

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._sizes.clear()
            self.bytes = 0


rendered_cache = ByteBoundedCache(lambda: settings.MARKDOWN_CACHE_BYTES)


def render_markdown(text: str) -> str:
    text = text or ""
    # keyed by a digest: the cache never holds the (possibly long) source text itself
    key = hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()
    html = rendered_cache.get(key)
    if html is None:
        html = _render(text)
        rendered_cache.put(key, html)
    return html


def _render(text: str) -> str:
    html = _markdown.render(text)
    return nh3.clean(
        html, link_rel="noopener noreferrer nofollow", url_schemes={"http", "https", "mailto"}
    )
