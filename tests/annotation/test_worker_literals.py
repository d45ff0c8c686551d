"""No text a participant can see is written into a worker template or script outside
Django's translation calls (docs/SPEC.md, "Languages").

Two readings of the sources, each strict where it can be:

* a template with every Django tag, variable and comment taken out — what is left is
  the HTML the template writes itself — holds no word in a text node, a ``<title>`` or
  an attribute a person reads (``aria-label``, ``title``, ``alt``, ``placeholder``, any
  ``data-*`` message): ``{% translate %}`` and ``{% blocktranslate %}`` are tags, so
  their text is gone, and a literal left in the HTML shows;
* a script's string literals that are not an argument of ``gettext`` / ``ngettext``
  must not read like prose (a capitalised word, or several words that are not a CSS
  selector): identifiers, selectors, header names and key names are what remains.

``tests/annotation/test_languages.py`` renders the pages in Japanese and finds no
English word left, which catches a string that comes from Python.
"""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest
from django.conf import settings

ROOT = Path(settings.BASE_DIR)
WORKER_TEMPLATES = sorted(
    [
        *(
            ROOT / "templates" / "annotation" / name
            for name in (
                "entry.html",
                "task.html",
                "questionnaire.html",
                "notice.html",
                "waiting.html",
                "elsewhere.html",
                "unavailable.html",
            )
        ),
        *(ROOT / "templates" / "annotation" / "kinds").glob("*.html"),
        ROOT / "templates" / "base.html",
    ]
)
WORKER_SCRIPTS = [
    ROOT / "static" / "annotation" / name
    for name in (
        "rating.js",
        "worker_requests.js",
        "answer_extras.js",
        "entry.js",
        "waiting.js",
        "content.js",
    )
]

DJANGO_MARKUP = re.compile(
    r"{%\s*comment\s*%}.*?{%\s*endcomment\s*%}"
    # the page's class names, which base.html writes into an attribute
    r"|{%\s*block body_class\s*%}.*?{%\s*endblock\s*%}"
    r"|{%\s*blocktrans(?:late)?\b.*?{%\s*endblocktrans(?:late)?\s*%}"
    r"|{%.*?%}|{{.*?}}|{#.*?#}",
    re.S,
)
WORD = re.compile(r"[^\W\d_]{2,}")
READ_ATTRIBUTES = {"aria-label", "aria-valuetext", "title", "alt", "placeholder", "label"}


class _Literals(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.found: list[str] = []
        self._skip = 0  # inside <script> or <style>

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style"):
            self._skip += 1
        for name, value in attrs:
            if value and (name in READ_ATTRIBUTES or name.startswith("data-")):
                if WORD.search(value):
                    self.found.append(f"<{tag} {name}={value!r}>")
            if value and tag == "input" and name == "value" and WORD.search(value):
                self.found.append(f"<input value={value!r}>")

    def handle_endtag(self, tag):
        if tag in ("script", "style") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip and WORD.search(data):
            self.found.append(data.strip())


def template_literals(source: str) -> list[str]:
    parser = _Literals()
    parser.feed(DJANGO_MARKUP.sub("", source))
    parser.close()
    return parser.found


@pytest.mark.parametrize("path", WORKER_TEMPLATES, ids=lambda path: path.name)
def test_a_worker_template_writes_no_text_outside_the_translation_tags(path):
    assert template_literals(path.read_text(encoding="utf-8")) == []


def test_the_template_reading_finds_a_literal_it_should():
    source = (
        '{% load i18n %}<p>{% translate "Fine" %}</p><p>Left over</p>'
        '<div aria-label="Item"></div><div data-message="Wait"></div>'
        "{% blocktranslate %}Also fine{% endblocktranslate %}{# a comment #}"
    )
    assert template_literals(source) == [
        "Left over",
        "<div aria-label='Item'>",
        "<div data-message='Wait'>",
    ]


# ---------------------------------------------------------------- scripts

STRING = re.compile(r"""(?P<quote>["'`])(?P<body>(?:\\.|(?!(?P=quote)).)*)(?P=quote)""", re.S)
COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
# a regular expression literal: a slash where a value starts (after an operator or bracket)
REGEX_LITERAL = re.compile(
    r"(?<=[(,=:\[!&|?{};])\s*/(?![/*])(?:\\.|\[(?:\\.|[^\]])*\]|[^/\n])+/[a-z]*"
)
TRANSLATED = re.compile(r"\b(?:n?gettext)\(\s*$")
HEADER_NAME = re.compile(r"^[A-Z][A-Za-z]*(?:-[A-Z][A-Za-z]*)+$")
KEY_NAMES = {"Enter", "Escape", "Tab"}  # values of KeyboardEvent.key the scripts compare
# lower case, and a selector's punctuation: a CSS selector or a list of them
SELECTOR = re.compile(r"^[a-z0-9\s,\[\]=#.:>()_*-]+$")
# attribute values made of several words that no one reads
TECHNICAL = {"noopener noreferrer nofollow", "use strict"}


def script_literals(source: str) -> list[str]:
    """The script's string literals that are not translated and read like prose."""
    code = COMMENT.sub(lambda match: " " * len(match.group()), source)
    code = REGEX_LITERAL.sub(lambda match: " " * len(match.group()), code)
    found = []
    last_end, after_translated = 0, False
    for match in STRING.finditer(code):
        before = code[last_end : match.start()]
        translated = bool(TRANSLATED.search(code[: match.start()])) or (
            after_translated and before.strip() == ","
        )
        after_translated = translated
        last_end = match.end()
        if translated:
            continue
        text = match.group("body")
        if _reads_like_prose(text):
            found.append(text)
    return found


def _reads_like_prose(text: str) -> bool:
    words = WORD.findall(text)
    if not words or text in TECHNICAL:
        return False
    if len(text.split()) == 1:
        return bool(re.match(r"^[A-Z][a-z]", text)) and not (
            HEADER_NAME.match(text) or text in KEY_NAMES
        )
    has_selector_marks = re.search(r"[,\[\]#.>:]", text)
    return not (SELECTOR.match(text) and has_selector_marks) and not text.strip().isidentifier()


@pytest.mark.parametrize("path", WORKER_SCRIPTS, ids=lambda path: path.name)
def test_a_worker_script_shows_no_text_outside_gettext(path):
    assert script_literals(path.read_text(encoding="utf-8")) == []


def test_the_script_reading_finds_a_literal_it_should():
    source = """
      const a = gettext("Saved");  // "A comment"
      const b = ngettext("One item", "Many items", n);
      const c = "Trying again";
      el.textContent = "saving your answer";
      if (event.key === "Enter") root.querySelectorAll("a[href], summary, button");
      headers["Content-Type"] = "application/json";
      const d = text.replace(/^[a-z_]+: /, "");
      status.textContent = 'Done';
    """
    assert script_literals(source) == ["Trying again", "saving your answer", "Done"]
