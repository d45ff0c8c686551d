"""Markdown → safe HTML for queries, responses and instructions.

markdown-it renders CommonMark plus tables, single newlines as line breaks, with raw HTML
disabled (so ``<script>`` in a response arrives as visible text), and nh3 (the ammonia
sanitiser) then strips anything outside its allow-list and gives every link
``rel="noopener noreferrer nofollow"``.
"""

from functools import lru_cache

import nh3
from markdown_it import MarkdownIt

# "breaks": a single newline is a line break, as chat interfaces show model output (a
# poem's lines must not run together into one paragraph).
_markdown = MarkdownIt("commonmark", {"html": False, "linkify": False, "breaks": True}).enable(
    "table"
)


@lru_cache(maxsize=4096)
def render_markdown(text: str) -> str:
    html = _markdown.render(text or "")
    return nh3.clean(
        html, link_rel="noopener noreferrer nofollow", url_schemes={"http", "https", "mailto"}
    )
