"""The participant's language (docs/SPEC.md, "Languages"): chosen at entry from the
browser's Accept-Language among the batch's offered languages, stored on the
participation, used on every later page and API answer; the batch's texts in it; staff
pages in English; and no English word left on a page shown in Japanese."""

import json
import re
from html.parser import HTMLParser

import pytest
from django.test import Client

from annotation.models import Participation
from annotation.services import languages
from annotation.services.exports.rows import iter_annotator_rows, iter_long_groups
from tests.factories import make_batch

pytestmark = pytest.mark.django_db

QUESTIONNAIRE = [
    {"id": "native", "text": "Is English your first language?", "type": "choice",
     "options": ["yes", "no"]},
    {"id": "age", "text": "Your age in years", "type": "number", "min": 18, "max": 99,
     "required": False},
]  # fmt: skip
TRANSLATIONS = {
    "ja": {
        "instructions": "よく読んで、**慎重に**評価してください。",
        "consent_text": "参加に同意します。",
        "scale_labels": {"0": "だいたい同じ"},
        "questionnaire": [
            {"id": "native", "text": "英語は第一言語ですか？", "options": ["はい", "いいえ"]},
            {"id": "age", "text": "年齢"},
        ],
    },
    "ar": {"instructions": "اقرأ بعناية وقيّم.", "consent_text": "أوافق على المشاركة."},
}


def study(**settings):
    defaults = {
        "kind": "pairwise",
        "n_items": 2,
        "per_item": 2,
        "languages": ["en", "ja", "ar"],
        "consent_text": "I agree to take part.",
        "questionnaire": QUESTIONNAIRE,
        "translations": TRANSLATIONS,
    }
    batch = make_batch(**{**defaults, **settings})
    batch.title = "評価の研究 · دراسة"
    batch.save(update_fields=["title"])
    return batch


def browser(language: str) -> Client:
    return Client(HTTP_ACCEPT_LANGUAGE=language)


def enter(client: Client, batch, worker: str = "w1"):
    return client.get(f"/work/{batch.slug}/", {"worker": worker})


# ---------------------------------------------------------------- the choice


@pytest.mark.parametrize(
    ("header", "offered", "chosen"),
    [
        ("ja,en;q=0.8", ["en", "ja", "ar"], "ja"),
        ("fr-CA,fr;q=0.9,ar;q=0.5", ["en", "ar"], "ar"),
        ("zh-CN,zh;q=0.9", ["en", "zh-hans"], "zh-hans"),
        ("zh-TW", ["en", "zh-hans"], "en"),  # traditional script: not Simplified Chinese
        ("pt-PT", ["en", "pt-br"], "pt-br"),
        ("ja;q=0,ar", ["en", "ja", "ar"], "ar"),  # q=0 refuses a language
        ("", ["en", "ja"], "en"),
        ("de", ["en", "ja"], "en"),  # none offered: the default
        ("ja", [], "en"),  # no languages offered: the default language only
    ],
)
def test_the_browser_picks_the_first_offered_language_it_asks_for(header, offered, chosen):
    batch = make_batch(n_items=1, languages=offered)
    assert languages.choose(batch, header) == chosen


def test_the_default_language_answers_a_browser_that_asks_for_none_offered():
    batch = make_batch(n_items=1, languages=["en", "ja", "ar"], language="ar")
    assert languages.choose(batch, "de-DE") == "ar"
    assert languages.offered(batch) == ["ar", "en", "ja"]
    assert languages.choose(make_batch(n_items=1, language="ja"), "en-US") == "ja"


def test_the_default_language_must_be_offered():
    from core.errors import InvalidInput

    with pytest.raises(InvalidInput) as refused:
        make_batch(n_items=1, languages=["en", "ja"], language="ar")
    assert refused.value.field == "language"


# ---------------------------------------------------------------- the pages


def test_the_language_chosen_at_entry_is_kept_for_every_later_page_and_api_answer():
    batch = study()
    client = browser("ja,en;q=0.5")
    page = enter(client, batch)
    html = page.content.decode()
    assert '<html lang="ja" dir="ltr">' in html
    assert "同意して開始" in html and "参加に同意します。" in html  # the batch's own text
    assert page["Content-Language"] == "ja"
    assert Participation.objects.get(batch=batch).language == "ja"
    # the browser now asks for English: the participant's pages stay Japanese
    client.defaults["HTTP_ACCEPT_LANGUAGE"] = "en"
    client.post(f"/work/{batch.slug}/consent")
    questions = client.get(f"/work/{batch.slug}/questionnaire").content.decode()
    assert "英語は第一言語ですか？" in questions and "はい" in questions
    client.post(f"/work/{batch.slug}/questionnaire", {"native": "yes", "age": "30"})
    task = client.get(f"/work/{batch.slug}/task").content.decode()
    assert "だいたい同じ" in task and "回答 1 のほうがずっと良い" in task
    assert "/jsi18n/ja/" in task
    token = client.cookies["csrftoken"].value
    answer = client.post(
        f"/api/v1/work/{batch.slug}/next", content_type="application/json", HTTP_X_CSRFTOKEN=token
    )
    assert answer["Content-Language"] == "ja"
    assert "回答 1" in answer.json()["item"]["html"]
    # the answer stored is the batch's own option, whatever the language shown
    participation = Participation.objects.get(batch=batch)
    assert participation.questionnaire_answers == {"native": "yes", "age": 30}
    wrong = client.post(
        "/api/v1/assignments/00000000-0000-0000-0000-000000000000/label",
        {"value": 2},
        content_type="application/json",
        HTTP_X_CSRFTOKEN=token,
    )
    assert wrong.status_code == 404 and wrong["Content-Language"] == "ja"


def test_arabic_pages_lay_out_right_to_left_and_say_how_the_keys_run():
    batch = study()
    client = browser("ar")
    html = enter(client, batch).content.decode()
    assert '<html lang="ar" dir="rtl">' in html
    client.post(f"/work/{batch.slug}/consent")
    client.post(f"/work/{batch.slug}/questionnaire", {"native": "no"})
    task = client.get(f"/work/{batch.slug}/task").content.decode()
    assert 'id="rtl-order"' in task  # the key help: key 1 is the first answer, on the right
    # in value order with their keys: key 1 is "Response 1 is much better" in any direction
    keys = re.findall(r'data-key="(\d)">\s*<input type="radio" name="value" value="(-?\d)"', task)
    assert keys == [("1", "2"), ("2", "1"), ("3", "0"), ("4", "-1"), ("5", "-2")]


def test_a_batch_offering_no_languages_stays_in_its_default_language():
    batch = make_batch(n_items=1)
    html = enter(browser("ja"), batch).content.decode()
    assert '<html lang="en" dir="ltr">' in html
    assert Participation.objects.get(batch=batch).language == "en"


def test_staff_pages_stay_in_english_whatever_the_browser_asks_for():
    html = browser("ar").get("/accounts/login/").content.decode()
    assert '<html lang="en" dir="ltr">' in html


def test_the_scripts_catalogue_is_a_file_of_the_site_in_each_language():
    catalogue = Client().get("/jsi18n/ja/")
    assert catalogue.status_code == 200
    assert catalogue["Content-Type"].startswith("text/javascript")
    assert json.dumps("保存しました")[1:-1] in catalogue.content.decode()
    assert "script-src 'self'" in catalogue["Content-Security-Policy"]
    assert Client().get("/jsi18n/tlh/").status_code == 404


def test_the_exports_record_the_language_each_participant_saw():
    batch = study()
    for worker, language in (("w-ja", "ja"), ("w-ar", "ar")):
        client = browser(language)
        enter(client, batch, worker)
        client.post(f"/work/{batch.slug}/consent")
        client.post(f"/work/{batch.slug}/questionnaire", {"native": "yes"})
        token = client.cookies["csrftoken"].value
        item = client.post(
            f"/api/v1/work/{batch.slug}/next",
            content_type="application/json",
            HTTP_X_CSRFTOKEN=token,
        ).json()
        client.post(
            f"/api/v1/assignments/{item['assignment']}/label",
            {"value": 1},
            content_type="application/json",
            HTTP_X_CSRFTOKEN=token,
        )
    long = [label for _, labels in iter_long_groups(batch) for label in labels]
    assert sorted(label["language"] for label in long) == ["ar", "ja"]
    assert sorted(row["language"] for row in iter_annotator_rows(batch)) == ["ar", "ja"]
    from annotation.services.exports.card import data_card

    assert "ar: 1; ja: 1" in data_card(batch)


# ---------------------------------------------------------------- no English left

# names that are the same in every language: keys printed on keyboards, platforms
NAMES = {"Enter", "Tab", "Esc", "HIT", "MTurk", "Prolific"}


class _VisibleText(HTMLParser):
    """The words a person reads on a page: its text and read attributes, not scripts."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.words: list[str] = []
        self._skip = 0

    def handle_starttag(self, tag, attrs):
        if tag in ("script", "style", "template"):
            self._skip += 1
        for name, value in attrs:
            if value and (name in ("aria-label", "title", "alt", "placeholder")
                          or (name.startswith("data-") and " " in value)):  # fmt: skip
                self.words += re.findall(r"[A-Za-z]{2,}", value)

    def handle_endtag(self, tag):
        if tag in ("script", "style", "template") and self._skip:
            self._skip -= 1

    def handle_data(self, data):
        if not self._skip:
            self.words += re.findall(r"[A-Za-z]{2,}", data)


def english_left(html: str, *allowed: str) -> set[str]:
    parser = _VisibleText()
    parser.feed(html)
    return set(parser.words) - NAMES - set(allowed)


@pytest.mark.parametrize("kind", ["pairwise", "absolute", "similarity", "short_text"])
def test_no_english_word_is_left_on_a_japanese_participants_pages(kind):
    if kind in ("similarity", "short_text"):
        batch = study(kind="absolute", questionnaire=[], translations={})
        batch.kind = kind
        batch.save(update_fields=["kind"])
    else:
        ja = {key: value for key, value in TRANSLATIONS["ja"].items() if key != "scale_labels"}
        batch = study(kind=kind, translations={"ja": ja} if kind == "absolute" else TRANSLATIONS)
    batch.instructions, batch.consent_text = "説明です。", "同意です。"
    batch.save(update_fields=["instructions", "consent_text"])
    client = browser("ja")
    pages = [enter(client, batch).content.decode()]
    client.post(f"/work/{batch.slug}/consent")
    if batch.questionnaire:
        pages.append(client.get(f"/work/{batch.slug}/questionnaire").content.decode())
        pages.append(
            client.post(f"/work/{batch.slug}/questionnaire", {"age": "7"}).content.decode()
        )  # every problem said in Japanese
        client.post(f"/work/{batch.slug}/questionnaire", {"native": "yes"})
    pages.append(client.get(f"/work/{batch.slug}/task").content.decode())
    for page in pages:
        # the questionnaire's stored option values are the batch's own (shown translated)
        assert english_left(page) == set(), page[:300]
    item = client.post(
        f"/api/v1/work/{batch.slug}/next",
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    ).json()
    # the item's own texts are the study's content; its headings are the page's
    item_words = {"Question", "Answer"} | {
        w for w in re.findall(r"[A-Za-z]+", str(item)) if w[0].isdigit()
    }
    assert english_left(item["item"]["html"], *item_words, "a", "b") == set()


def test_the_endings_and_errors_a_japanese_participant_meets_are_in_japanese():
    batch = make_batch(n_items=1, per_item=1, languages=["en", "ja"])
    batch.title = "調査"
    batch.save(update_fields=["title"])
    client = browser("ja")
    pages = [
        client.get("/work/no-such-study/").content.decode(),
        client.get(f"/work/{batch.slug}/").content.decode(),  # no worker id
        client.get(f"/work/{batch.slug}/consent").content.decode(),
    ]
    from annotation.models import Item

    Item.objects.filter(batch=batch).update(counted_count=1, reserved_count=1)
    pages.append(enter(client, batch, "late").content.decode())  # the study is full
    for page in pages:
        # the link's parameter names are the platforms' own; Japanese writes "ID" so
        assert english_left(page, "PROLIFIC", "PID", "workerId", "worker", "ID") == set(), page[
            :400
        ]


def test_create_batch_takes_the_languages_and_a_translations_file(tmp_path):
    from django.core.management import call_command
    from django.core.management.base import CommandError

    from annotation.models import Batch

    translations = tmp_path / "translations.yaml"
    translations.write_text(
        "ja:\n  instructions: |\n    両方の回答を読んでください。\n"
        '  scale_labels:\n    "0": だいたい同じ\n',
        encoding="utf-8",
    )
    call_command(
        "create_batch", "multilingual", "--kind", "pairwise", "--languages", "en,ja,ar",
        "--language", "en", "--translations", str(translations),
    )  # fmt: skip
    batch = Batch.objects.get(slug="multilingual")
    assert (batch.languages, batch.language) == (["en", "ja", "ar"], "en")
    assert batch.translations == {
        "ja": {
            "instructions": "両方の回答を読んでください。\n",
            "scale_labels": {"0": "だいたい同じ"},
        }
    }
    translations.write_text('ja:\n  scale_labels:\n    "7": 七\n', encoding="utf-8")
    with pytest.raises(CommandError, match=r"translations\.ja\.scale_labels\.7"):
        call_command(
            "create_batch", "bad-labels", "--kind", "pairwise", "--translations", str(translations)
        )


def test_the_worker_apis_refusals_are_in_the_participants_language():
    batch = make_batch(n_items=1, per_item=1, languages=["en", "ja"])
    # no session at all: how to get one (not DRF's "Authentication credentials…")
    stranger = Client(HTTP_ACCEPT_LANGUAGE="ja")
    refused = stranger.post(f"/api/v1/work/{batch.slug}/next", "{}", "application/json")
    assert refused.status_code == 403
    assert (
        refused.json()["detail"]
        == "まず、ご利用のプラットフォームから調査のリンクを開いてください。"
    )
    # a session, but the page's security token missing
    client = Client(HTTP_ACCEPT_LANGUAGE="ja", enforce_csrf_checks=True)
    enter(client, batch, "w-ja")
    client.post(
        f"/work/{batch.slug}/consent", {"csrfmiddlewaretoken": client.cookies["csrftoken"].value}
    )
    no_token = client.post(f"/api/v1/work/{batch.slug}/next", "{}", "application/json")
    assert no_token.status_code == 403
    assert no_token.json()["detail"].startswith("このページのセキュリティ確認に失敗しました")
    # an assignment that is not theirs
    token = {"HTTP_X_CSRFTOKEN": client.cookies["csrftoken"].value}
    unknown = client.post(
        "/api/v1/assignments/00000000-0000-0000-0000-000000000000/label",
        '{"value": 3, "duration_ms": 1000}',
        "application/json",
        **token,
    )
    assert unknown.status_code == 404 and unknown.json()["detail"] == "この課題はありません。"


@pytest.mark.parametrize(
    "path",
    [
        "/work/{slug}/?worker=a%01b",  # refused before the page knows the study's language
        "/work/{slug}/no-such-page",  # an address nobody made
        "/work/no-such-study/task",
    ],
)
def test_the_error_pages_a_participant_meets_are_in_their_language(path):
    batch = make_batch(n_items=1, per_item=1, languages=["en", "ja"])
    answer = browser("ja").get(path.format(slug=batch.slug))
    assert answer.status_code in (400, 404), answer.status_code
    page = answer.content.decode()
    assert '<html lang="ja"' in page and answer["Content-Language"] == "ja"
    # the study's own words and what the link carried are not the page's to translate
    assert english_left(page, "worker", "U+0001", "consent") == set(), page[:600]


def test_staff_error_pages_stay_in_english_whatever_the_browser_asks():
    answer = browser("ja").get("/manage/no-such-page/nothing")
    assert answer.status_code in (302, 404)
    missing = browser("ja").get("/no-such-page")
    assert missing.status_code == 404 and '<html lang="en"' in missing.content.decode()
    assert "There is nothing at this address." in missing.content.decode()
