"""The Markdown cache holds at most MARKDOWN_CACHE_BYTES per process."""

import tracemalloc

from annotation import rendering
from annotation.rendering import ByteBoundedCache, render_markdown


def test_sixty_different_long_responses_stay_within_the_budget(settings):
    settings.MARKDOWN_CACHE_BYTES = 2 * 1024 * 1024
    rendering.rendered_cache.clear()
    tracemalloc.start()
    try:
        for index in range(60):
            render_markdown(f"response {index}\n\n" + "word " * 20_000)  # ~100 kB each
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert rendering.rendered_cache.bytes <= settings.MARKDOWN_CACHE_BYTES
    assert 0 < len(rendering.rendered_cache) < 60
    assert held < 4 * settings.MARKDOWN_CACHE_BYTES


def test_a_huge_text_is_rendered_but_not_cached(settings):
    settings.MARKDOWN_CACHE_BYTES = 1024 * 1024
    rendering.rendered_cache.clear()
    html = render_markdown("big " * 100_000)
    assert html.startswith("<p>big big")
    assert len(rendering.rendered_cache) == 0
    assert render_markdown("*small*") == "<p><em>small</em></p>\n"
    assert len(rendering.rendered_cache) == 1


def test_least_recently_used_goes_first():
    cache = ByteBoundedCache(lambda: 16 * 1000)
    for key in (b"a", b"b", b"c"):
        cache.put(key, "x" * 300)
    assert cache.get(b"a") is not None  # a is now the most recently used
    for index in range(40):
        cache.put(str(index).encode(), "y" * 300)
        assert cache.bytes <= 16 * 1000
    assert cache.get(b"b") is None
