"""The participant's pages in each shipped language, in a real browser (docs/SPEC.md,
"Languages"):

* every language: the entry page and a rating page of nasty content pass axe at a
  desktop and a phone size, in the language the browser asks for, with no English word
  left in the page's own texts (the kinds take turns: one batch per kind for the test);
* a participant whose browser asks for Japanese, then one asking for Arabic, opens a
  pairwise study with a consent text in both languages, answers the questionnaire, rates
  by keyboard and finishes — every word of the interface in their language, the Arabic
  page laid out right to left with "Response 1" (the one shown first) on the right and
  key 1 its first option;
* the same with the admin pausing and resuming the batch mid-study (the page says so in
  the participant's language and carries on by itself) and an attention check shown
  with B first.

A screenshot of each language's rating page goes to ``test-artifacts/lang-*.png``.
"""

import io
import random
import re
from pathlib import Path

import polib
import pytest
from django.utils.translation import to_locale
from playwright.sync_api import Page, expect

from annotation.models import Label, Participation
from annotation.services import leasing, quality
from annotation.services.batches import change_state, update_batch
from annotation.services.importing import import_items
from tests.browser.accessibility import assert_no_axe_violations
from tests.browser.conftest import PHONE, WIDE
from tests.browser.nasty_items import make_nasty_study
from tests.factories import make_batch

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LANGUAGES = ["en", "es", "de", "fr", "pt-br", "zh-hans", "ja", "ko", "hi", "ar"]
# the browser's own name of each (what Chromium sends as Accept-Language)
BROWSER_LOCALES = {"pt-br": "pt-BR", "zh-hans": "zh-CN"}
# the kinds that show nasty content take turns (short_text's page is the literal tests')
KINDS = ["pairwise", "absolute", "similarity"]
LATIN_SCRIPT = {"en", "es", "de", "fr", "pt-br"}
# names that stay as they are in every language: keys printed on keyboards, platforms
NAMES = {"Enter", "Tab", "Esc", "HIT", "MTurk", "Prolific", "ID"}

# The page's own words as a person sees them (innerText): the study's content (its
# Markdown texts, written by the researcher) and key caps left out.
INTERFACE_TEXT = """() => {
    const copy = document.body.cloneNode(true);
    copy.querySelectorAll(".markdown, kbd, script, template").forEach((n) => n.remove());
    const labels = Array.from(document.querySelectorAll("[aria-label]"))
        .filter((n) => !n.closest(".markdown"))
        .map((n) => n.getAttribute("aria-label"));
    return [copy.innerText, document.title, ...labels].join("\\n");
}"""


def catalogue_words(language: str, *, english: bool = False) -> set[str]:
    """The words of a language's catalogues (their msgstr; with ``english``, the msgid)."""
    words = set()
    for domain in ("django", "djangojs"):
        path = Path("locale") / to_locale(language) / "LC_MESSAGES" / f"{domain}.po"
        for entry in polib.pofile(str(path)):
            texts = [entry.msgid, entry.msgid_plural] if english else [
                entry.msgstr, *entry.msgstr_plural.values()
            ]  # fmt: skip
            for text in texts:
                words |= set(re.findall(r"[^\W\d_]{2,}", text or ""))
    return words


def english_words(page: Page, language: str) -> set[str]:
    """The page's interface words that are English: in a language of another script any
    Latin word (but names); in one of Latin script, a word of the English messages that
    the language's own messages do not use (e.g. "Prompt" is German too)."""
    words = set(re.findall(r"[^\W\d_]{2,}", page.evaluate(INTERFACE_TEXT))) - NAMES
    if language in LATIN_SCRIPT:
        return (words & catalogue_words("en", english=True)) - catalogue_words(language)
    return {word for word in words if re.fullmatch(r"[A-Za-z]+", word)}


def new_page(browser, language: str, viewport=WIDE):
    locale = BROWSER_LOCALES.get(language, language)
    context = browser.new_context(viewport=viewport, locale=locale)
    context.set_default_timeout(5_000)
    return context, context.new_page()


def axe_at_both_sizes(page: Page, name: str) -> None:
    for size, viewport in (("desktop", WIDE), ("phone", PHONE)):
        page.set_viewport_size(viewport)
        page.wait_for_timeout(50)
        assert_no_axe_violations(page, name=f"{name} ({size})")
    page.set_viewport_size(WIDE)


def test_each_language_passes_axe_on_the_entry_and_a_rating_page(browser, live_server, artifacts):
    studies = {
        kind: make_nasty_study(
            kind,
            slug=f"lang-{kind.replace('_', '-')}",
            per_item=len(LANGUAGES),
            combined=True,
            languages=LANGUAGES,
        )
        for kind in KINDS
    }
    for study in studies.values():
        update_batch(study, {"title": "—"})  # the title is the study's own text
    for number, language in enumerate(LANGUAGES):
        kind = KINDS[number % len(KINDS)]
        batch = studies[kind]
        context, page = new_page(browser, language)
        try:
            page.goto(f"{live_server.url}/work/{batch.slug}/?worker=reader-{language}")
            expect(page.locator("html")).to_have_attribute("lang", language)
            expect(page.locator("html")).to_have_attribute(
                "dir", "rtl" if language == "ar" else "ltr"
            )
            if language != "en":
                assert english_words(page, language) == set(), language
            axe_at_both_sizes(page, f"entry, {language}")
            page.locator("#start").click()
            expect(page.locator("#rating")).to_be_visible()
            if kind != "short_text":
                expect(page.locator("#item")).to_contain_text("END-OF-")
            expect(page.locator("#progress-text")).not_to_be_empty()
            if language != "en":
                assert english_words(page, language) == set(), (language, kind)
            if language in ("ar", "hi", "ja", "ko", "zh-hans") and kind != "short_text":
                # the wide blocks' names, which screen readers read, in the language too
                names = page.eval_on_selector_all(
                    ".wide-block", "blocks => blocks.map((b) => b.getAttribute('aria-label'))"
                )
                assert names and not [n for n in names if "Code" in n or "Table" in n], names
            page.screenshot(path=artifacts / f"lang-{language}-rating-{kind}.png")
            axe_at_both_sizes(page, f"rating page ({kind}), {language}")
            assert (
                Participation.objects.get(
                    batch=batch, annotator__platform_id=f"reader-{language}"
                ).language
                == language
            )
        finally:
            context.close()


CONSENT = {
    "ja": "# 同意\n\n言語モデルの回答を評価する研究に参加します。回答は仮名で保存されます。",
    "ar": "# الموافقة\n\nتشارك في دراسة لتقييم إجابات النماذج اللغوية. تُحفظ إجاباتك باسم مستعار.",
}
QUESTIONS = [
    {"id": "native", "text": "Is English your first language?", "type": "choice",
     "options": ["yes", "no"]},
    {"id": "age", "text": "Your age in years", "type": "number", "min": 18, "max": 99},
]  # fmt: skip


def translation(language: str, instructions: str, native: str, yes_no: list, age: str) -> dict:
    """A batch's texts in ``language``: its consent, instructions and QUESTIONS."""
    questions = [{"id": "native", "text": native, "options": yes_no}, {"id": "age", "text": age}]
    return {
        "consent_text": CONSENT[language],
        "instructions": instructions,
        "questionnaire": questions,
    }


TRANSLATED = {
    "ja": translation(
        "ja", "両方の回答を最後まで読んでから選んでください。",
        "英語は第一言語ですか？", ["はい", "いいえ"], "年齢",
    ),
    "ar": translation(
        "ar", "اقرأ الإجابتين حتى النهاية قبل أن تختار.",
        "هل الإنجليزية لغتك الأولى؟", ["نعم", "لا"], "عمرك بالسنوات",
    ),
}  # fmt: skip
ANSWERS = {"ja": ("いいえ", "年齢", "34"), "ar": ("لا", "عمرك بالسنوات", "29")}


def test_a_japanese_then_an_arabic_participant_take_a_bilingual_pairwise_study(
    browser, live_server
):
    batch = make_batch(
        kind="pairwise",
        n_items=2,
        per_item=2,
        languages=["en", "ja", "ar"],
        questionnaire=QUESTIONS,
        translations=TRANSLATED,
        completion_code="7Q2-94X",
    )
    batch.title, batch.consent_text = "研究 · دراسة", "# Consent\n\nYou take part in a study."
    batch.save(update_fields=["title", "consent_text"])
    for language in ("ja", "ar"):
        context, page = new_page(browser, language)
        try:
            page.goto(
                f"{live_server.url}/work/{batch.slug}/"
                f"?PROLIFIC_PID=bilingual-{language}&STUDY_ID=s&SESSION_ID=x"
            )
            expect(page.locator("#consent-text")).to_contain_text(CONSENT[language][2:6])
            assert english_words(page, language) == set()
            page.keyboard.press("Enter")  # the start button has the focus
            expect(page).to_have_url(re.compile(r"/questionnaire$"))
            choice, age_label, age = ANSWERS[language]
            page.get_by_label(choice).check()
            page.get_by_label(age_label).fill(age)
            assert english_words(page, language) == set()
            page.locator("#questionnaire-submit").click()
            expect(page.locator("#rating")).to_be_visible()
            assert english_words(page, language) == set()
            if language == "ar":
                # right to left: the first-shown response and key 1 sit on the right
                first = page.locator("#response-1-card").bounding_box()
                second = page.locator("#response-2-card").bounding_box()
                assert first["x"] > second["x"]
                one = page.locator('.choice[data-key="1"]').bounding_box()
                five = page.locator('.choice[data-key="5"]').bounding_box()
                assert one["x"] > five["x"]
            # Enter with nothing chosen: the hint comes from the scripts' catalogue
            page.keyboard.press("Enter")
            expect(page.locator("#status")).to_be_visible()
            assert english_words(page, language) == set()
            page.keyboard.press("1")
            page.keyboard.press("Enter")
            # the next item is on the page when no option is chosen any more
            expect(page.locator(".choice.selected")).to_have_count(0)
            expect(page.locator("#saved")).not_to_be_empty()
            page.keyboard.press("4")
            page.keyboard.press("Enter")
            expect(page.locator("#done")).to_be_visible()
            expect(page.locator("#completion-code")).to_have_text("7Q2-94X")
            assert english_words(page, language) == set()
            participation = Participation.objects.get(
                batch=batch, annotator__platform_id=f"bilingual-{language}"
            )
            assert participation.language == language
            # the stored answer is the batch's own option, whichever language showed it
            assert participation.questionnaire_answers["native"] == "no"
        finally:
            context.close()


class _ChecksShownBFirst(random.Random):
    """The checks' random order, fixed to B first (annotation.services.quality)."""

    def choice(self, seq):
        return "ba" if tuple(seq) == ("ab", "ba") else super().choice(seq)


@pytest.mark.parametrize("language", ["ja", "ar"])
def test_a_check_shown_b_first_and_a_pause_in_the_participants_language(
    browser, live_server, monkeypatch, language
):
    """Mid-study the admin pauses the batch and resumes it; the page says so in the
    participant's language and carries on by itself; an attention check is shown with B
    first, and the participant who picks the right response as shown passes it."""
    monkeypatch.setattr(quality, "random", _ChecksShownBFirst(5))
    monkeypatch.setattr(leasing, "PAUSED_RETRY_AFTER_SECONDS", 1)
    batch = make_batch(kind="pairwise", n_items=2, per_item=1, languages=["en", language],
                       check_every=1, completion_code="P4U-5E")  # fmt: skip
    check = (
        '{"item_id": "check-1", "query_id": "check-q", "query": "Attention", '
        '"response_a_id": "check-a", "response_a": "CHECK-A", "response_b_id": "check-b", '
        '"response_b": "CHECK-B", "check": true, "gold": [2]}\n'
    )
    import_items(batch, io.BytesIO(check.encode()), filename="check.jsonl")
    batch.title = "研究 · دراسة"  # the researcher's own words: not the interface's
    batch.save(update_fields=["title"])
    context, page = new_page(browser, language)
    try:
        page.goto(f"{live_server.url}/work/{batch.slug}/?PROLIFIC_PID=pause-{language}"
                  "&STUDY_ID=s&SESSION_ID=x")  # fmt: skip
        page.keyboard.press("Enter")
        expect(page.locator("#rating")).to_be_visible()
        change_state(batch, "paused")  # the admin pauses while the item is on screen
        page.keyboard.press("2")
        page.keyboard.press("Enter")  # kept: it was handed out before the pause
        expect(page.locator("#status")).to_be_visible()
        expect(page.locator("#rating")).to_be_hidden()
        assert english_words(page, language) == set()
        assert_no_axe_violations(page, name=f"paused ({language})")
        batch.refresh_from_db()
        change_state(batch, "live")
        # the check comes next (check_every=1), B shown first
        expect(page.locator("#response-1")).to_have_text("CHECK-B", timeout=10_000)
        expect(page.locator("#status")).to_be_hidden()
        page.keyboard.press("5")  # "Response 2 is much better": A, the check's answer
        page.keyboard.press("Enter")
        expect(page.locator("#response-1")).not_to_have_text("CHECK-B")
        page.keyboard.press("3")
        page.keyboard.press("Enter")
        expect(page.locator("#done")).to_be_visible()
        expect(page.locator("#completion-code")).to_have_text("P4U-5E")
        assert english_words(page, language) == set()
    finally:
        context.close()
    [passed] = Label.objects.filter(batch=batch, status="check")
    assert passed.shown_order == "ba" and passed.value == 2 and passed.check_passed
    assert Label.objects.filter(batch=batch, status="counted").count() == 2
