"""A corpus of items that try to break the rating page: texts a language model really
writes (long code lines, wide tables, very long answers, right-to-left scripts, emoji,
an unbroken URL, deep lists, Markdown headings, text that looks like HTML).

``make_nasty_study(kind, ...)`` builds a live batch of these items through the real
import (``import_items``), for the kinds that show responses: ``absolute``, ``pairwise``
(each pair puts a nasty text beside a short or another nasty one) and ``similarity``
(reference beside candidate); ``combined=True`` makes one item that has every problem at
once (also for ``short_text``, whose prompt is the item). Every text ends with a line
``END-OF-<name>`` so that a test can find the last line of each response on the page.
"""

from annotation.models import Batch
from tests.factories import imported_batch, pair_columns


def _end(name: str) -> str:
    return f"\n\nEND-OF-{name}"


LONG_CODE_LINE = (
    "result = compute_everything(alpha=1, beta=2, gamma=3, "
    + ", ".join(f"parameter_{index}=value_{index}" for index in range(60))
    + ")  # one very long line"
)

LONG_CODE = (
    "Here is the script:\n\n```python\n"
    "import math\n\n"
    "def compute_everything(**settings):\n"
    "    return sum(math.sqrt(abs(hash(key)) % 97) for key in settings)\n\n"
    f"{LONG_CODE_LINE}\n"
    "print(result)\n```\n\n"
    "Run it with `python script.py --with-a-very-long-option-name-that-does-not-break`."
)

WIDE_TABLE = (
    "A table of 200 columns:\n\n"
    + "| "
    + " | ".join(f"col{index}" for index in range(200))
    + " |\n|"
    + "---|" * 200
    + "\n| "
    + " | ".join(f"v{index}" for index in range(200))
    + " |\n\nThe table ends here."
)

SENTENCE = (
    "The committee weighed each proposal carefully, noting where the evidence was strong "
    "and where it rested on assumptions nobody had tested."
)
# about 5,000 words, in paragraphs, with a few headings
LONG_ANSWER = "\n\n".join(
    (f"## Part {part}\n\n" if paragraph % 12 == 0 else "") + " ".join([SENTENCE] * 5)
    for part, paragraph in ((index // 12 + 1, index) for index in range(46))
)

RTL_TEXT = (
    "## الإجابة\n\n"
    "هذا نص باللغة العربية يشرح الفكرة خطوة بخطوة، ويجب أن يظهر من اليمين إلى اليسار.\n\n"
    "זהו משפט בעברית עם מספר 42 ומילה English באמצע.\n\n"
    "- البند الأول\n- البند الثاني\n\n"
    "A closing sentence in English."
)

EMOJI = (
    "Great question! 🎉🎉🎉 Here are my favourites: 🍎🍐🍊🍋🍌🍉🍇🍓🫐🍈🍒🍑🥭🍍🥥🥝🍅🍆🥑🥦"
    "🥬🥒🌶️🫑🌽🥕🫒🧄🧅🥔🍠🫘🥐🥯🍞🥖🥨🧀🥚🍳🧈🥞🧇🥓🥩🍗🍖🦴🌭🍔🍟🍕 and a family: 👨‍👩‍👧‍👦 "
    "with flags 🇫🇷🇯🇵🇧🇷 and skin tones 👍🏽👋🏿."
)

LONG_URL = (
    "See https://example.com/"
    + "/".join(f"segment-{index}-with-more-words" for index in range(25))
    + "?query="
    + "x" * 300
    + " for details, or [this link](https://example.com/"
    + "y" * 200
    + ")."
)

NESTED_LISTS = (
    "## Step 1\n\nPrepare the ingredients:\n\n"
    "1. Flour\n"
    "   - wheat\n"
    "     - whole grain\n"
    "       1. stone-ground\n"
    "       2. roller-milled\n"
    "   - rye\n"
    "2. Water\n\n"
    "## Step 2\n\n"
    "> A quoted remark that spans a line,\n> and continues here.\n\n"
    "### Details\n\nMix **well** and *rest* for `30` minutes."
)

HTML_LOOKING = (
    '<div style="position:fixed;inset:0;background:red">Click here</div>\n\n'
    '<script>alert("hi")</script> <img src=x onerror=alert(1)> &lt;b&gt;not bold&lt;/b&gt;\n\n'
    "</article></div></main> A stray closing tag should not end anything."
)

DEEP_HEADING = "#### A heading four levels down\n\nThe answer starts with a deep heading."

NASTY_TEXTS: dict[str, str] = {
    "long-code": LONG_CODE,
    "wide-table": WIDE_TABLE,
    "long-answer": LONG_ANSWER,
    "rtl": RTL_TEXT,
    "emoji": EMOJI,
    "long-url": LONG_URL,
    "nested-lists": NESTED_LISTS,
    "html-looking": HTML_LOOKING,
    "deep-heading": DEEP_HEADING,
}

SHORT = "A short answer: yes."

# the pairs a pairwise or similarity study shows (first, second)
PAIRS: list[tuple[str, str]] = [
    ("long-code", "short"),
    ("short", "wide-table"),
    ("long-answer", "rtl"),
    ("emoji", "long-url"),
    ("nested-lists", "html-looking"),
    ("deep-heading", "long-code"),
]


def text(name: str) -> str:
    """A corpus text by name, with its end marker."""
    body = SHORT if name == "short" else NASTY_TEXTS[name]
    return body + _end(name)


def all_in_one(names: list[str]) -> str:
    """One text holding several of the corpus's (for one item that has every problem)."""
    return "\n\n".join(NASTY_TEXTS[name] for name in names) + _end("+".join(names))


def item_rows(kind: str, *, combined: bool = False) -> list[dict]:
    """An items file (as rows) of ``kind`` made of the corpus: an item per nasty text (or
    pair), or with ``combined`` a single item whose texts hold all of them."""
    rows = []
    if combined:
        first, second = list(NASTY_TEXTS)[::2], list(NASTY_TEXTS)[1::2]
        row = {"item_id": "nasty-all", "query_id": "q-all", "query": "Everything at once."}
        if kind == "absolute":
            row.update(response_id="r-all", response=all_in_one(list(NASTY_TEXTS)))
        elif kind == "pairwise":
            row.update(
                response_a_id="ra-all",
                response_a=all_in_one(first),
                response_b_id="rb-all",
                response_b=all_in_one(second),
            )
        elif kind == "similarity":
            row.update(reference=all_in_one(first), candidate=all_in_one(second))
        elif kind == "short_text":
            row.update(query="Name a colour. " + NASTY_TEXTS["nested-lists"])
        else:
            raise ValueError(f"no nasty items for kind {kind!r}")
        return [row]
    if kind == "absolute":
        for name in NASTY_TEXTS:
            rows.append(
                {
                    "item_id": f"nasty-{name}",
                    "query_id": f"q-{name}",
                    "query": f"Prompt for the {name} case: answer **in full**.",
                    "response_id": f"r-{name}",
                    "model": "model-x",
                    "response": text(name),
                }
            )
    elif kind in ("pairwise", "similarity"):
        for first, second in PAIRS:
            row = {
                "item_id": f"nasty-{first}-vs-{second}",
                "query_id": f"q-{first}-{second}",
                "query": f"Compare: {first} and {second}.",
            }
            if kind == "pairwise":
                a, b = (f"ra-{first}-{second}", text(first)), (f"rb-{first}-{second}", text(second))
                row.update(pair_columns(a, b))
            else:
                row.update(reference=text(first), candidate=text(second))
            rows.append(row)
    else:
        raise ValueError(f"no nasty items for kind {kind!r}")
    return rows


LONG_INSTRUCTIONS = (
    "# How to rate\n\n"
    "Read the prompt and **every** response to its end before you choose.\n\n"
    "## What counts\n\n"
    "- Is it correct?\n- Is it helpful?\n- Is it safe?\n\n"
    "#### A note\n\nLong responses scroll with the page; wide code and tables scroll "
    "sideways inside their own box."
)


def make_nasty_study(
    kind: str, *, slug: str, per_item: int = 1, combined: bool = False, **settings
) -> Batch:
    """A live batch of ``kind`` holding the whole corpus, imported as a researcher would
    (``combined``: as one item, see ``item_rows``)."""
    settings.update(
        title=f"Nasty items ({kind})",
        instructions=LONG_INSTRUCTIONS,
        completion_code="NASTY-DONE",
        completion_url="https://app.prolific.com/submissions/complete?cc=NASTY-DONE",
    )
    rows = item_rows(kind, combined=combined)
    return imported_batch(
        kind, rows, slug=slug, per_item=per_item, filename="nasty.jsonl", **settings
    )
