"""The message catalogues (locale/<language>/LC_MESSAGES/django.po and djangojs.po):
complete for every shipped language, plural forms right, every placeholder and tag
kept, and the committed .mo files the same as their .po files (bin/compile-messages)."""

import gettext
import re
from pathlib import Path

import polib
import pytest
from django.conf import settings
from django.utils.translation import to_locale

from tests.annotation.test_worker_literals import WORKER_SCRIPTS, WORKER_TEMPLATES

LOCALE = Path(settings.BASE_DIR) / "locale"
DOMAINS = ("django", "djangojs")
LANGUAGES = [code for code, _ in settings.LANGUAGES]
CATALOGUES = [(code, domain) for code in LANGUAGES for domain in DOMAINS]
# gettext's plural forms of each language (the counts that take each form)
NPLURALS = {
    "en": 2, "es": 3, "de": 2, "fr": 2, "pt-br": 2, "zh-hans": 1, "ja": 1, "ko": 1, "hi": 2,
    "ar": 6,
}  # fmt: skip
MARKS = re.compile(r"%%?\(\w+\)s|<[^>]+>")


def catalogue(code: str, domain: str) -> polib.POFile:
    return polib.pofile(str(LOCALE / to_locale(code) / "LC_MESSAGES" / f"{domain}.po"))


def marks(text: str) -> set[str]:
    return {mark.replace("%%", "%") for mark in MARKS.findall(text)}


def test_every_shipped_language_has_its_catalogues():
    assert set(NPLURALS) == set(LANGUAGES)
    for code, domain in CATALOGUES:
        assert (LOCALE / to_locale(code) / "LC_MESSAGES" / f"{domain}.po").is_file()


@pytest.mark.parametrize(("code", "domain"), CATALOGUES)
def test_a_catalogue_is_complete_and_keeps_every_placeholder(code, domain):
    po = catalogue(code, domain)
    english = {entry.msgid for entry in catalogue("en", domain)}
    assert {entry.msgid for entry in po} == english  # the same messages in every language
    assert not po.metadata_is_fuzzy
    assert [entry.msgid for entry in po.fuzzy_entries()] == []
    assert [entry.msgid for entry in po.untranslated_entries()] == []
    assert [entry.msgid for entry in po.obsolete_entries()] == []
    nplurals = int(re.search(r"nplurals=(\d+)", po.metadata["Plural-Forms"]).group(1))
    assert nplurals == NPLURALS[code]
    for entry in po:
        if entry.msgid_plural:
            assert sorted(entry.msgstr_plural) == list(range(nplurals)), entry.msgid
            allowed = marks(entry.msgid) | marks(entry.msgid_plural)
            for form in entry.msgstr_plural.values():
                assert form.strip() and marks(form) <= allowed, (entry.msgid, form)
                # a count a form leaves out must still be said (Arabic's "two" forms)
                assert {m for m in marks(entry.msgid_plural) if m.startswith("<")} <= marks(form)
        else:
            assert marks(entry.msgstr) == marks(entry.msgid), (entry.msgid, entry.msgstr)
            assert ("%%" in entry.msgid) == ("%%" in entry.msgstr), entry.msgid


@pytest.mark.parametrize(("code", "domain"), CATALOGUES)
def test_the_committed_mo_file_is_its_po_file_compiled(code, domain):
    path = LOCALE / to_locale(code) / "LC_MESSAGES" / f"{domain}.mo"
    with path.open("rb") as compiled:
        served = gettext.GNUTranslations(compiled)._catalog
    wanted = {}
    for entry in catalogue(code, domain):
        if entry.msgid_plural:
            for index, form in entry.msgstr_plural.items():
                wanted[(entry.msgid, index)] = form
        else:
            wanted[entry.msgid] = entry.msgstr
    served = {key: value for key, value in served.items() if key != ""}  # the header
    assert served == wanted, "run bin/compile-messages after editing a .po file"


TRANSLATE_TAG = re.compile(r"""{%\s*translate\s+(["'])(.*?)\1""")
SCRIPT_CALL = re.compile(r"""\bn?gettext\(\s*(["'])((?:\\.|(?!\1).)*)\1""", re.S)


def test_the_catalogues_hold_every_message_the_pages_and_scripts_ask_for():
    """A message added to a page without collecting it (bin/compile-messages --collect)
    would be shown in English to everyone."""
    pages = {entry.msgid.replace("%%", "%") for entry in catalogue("en", "django")}
    scripts = {entry.msgid for entry in catalogue("en", "djangojs")}
    for path in WORKER_TEMPLATES:
        for _, message in TRANSLATE_TAG.findall(path.read_text(encoding="utf-8")):
            assert message in pages, (path.name, message)
    for path in WORKER_SCRIPTS:
        for _, message in SCRIPT_CALL.findall(path.read_text(encoding="utf-8")):
            assert message in scripts, (path.name, message)
