"""Which language a participant's pages are in, and the batch's texts in it
(docs/SPEC.md, "Languages").

* A batch offers the codes in ``Batch.languages`` (each one of ``settings.LANGUAGES``);
  an empty list offers its default language only, so a batch written in one language
  never shows its texts under an interface in another.
* Its default is ``Batch.language``, else the first offered code, else English.
* At entry the participant's ``Accept-Language`` picks the first offered language it
  names (``choose``); the choice is stored on the participation (``settle``) and every
  later page and API answer of theirs uses it.
* The batch's own texts (instructions, consent, button texts, questionnaire) come from
  ``Batch.translations[code]`` where given, else from the batch's default texts
  (``texts_in``). A translated questionnaire shows its own question and option texts
  but stores the default option texts, so that answers group alike across languages.
"""

from dataclasses import dataclass

from django.conf import settings

from annotation.models import Batch, Participation
from core.errors import InvalidInput

ENGLISH = "en"
# browser tags that name a shipped language by another name (Simplified Chinese as
# spoken in mainland China or Singapore; Portuguese wherever: Brazil's is the one shipped)
ALIASES = {"zh": "zh-hans", "zh-cn": "zh-hans", "zh-sg": "zh-hans", "zh-my": "zh-hans"}
# Chinese tags of the traditional script: not served Simplified Chinese
TRADITIONAL_CHINESE = ("zh-hant", "zh-tw", "zh-hk", "zh-mo")
# the batch's texts a translation may give
TRANSLATED_TEXTS = ("instructions", "consent_text", "scale_labels", "questionnaire")


def shipped() -> list[str]:
    """The codes of the languages the platform has catalogues for, English first."""
    return [code for code, _ in settings.LANGUAGES]


def default_language(batch: Batch) -> str:
    return batch.language or (batch.languages[0] if batch.languages else ENGLISH)


def offered(batch: Batch) -> list[str]:
    """The codes a participant of this batch may get, the default first."""
    default = default_language(batch)
    return [default, *(code for code in batch.languages or [] if code != default)]


def parse_accept_language(header: str) -> list[str]:
    """The tags of an ``Accept-Language`` header, most wanted first (``q=0`` dropped)."""
    weighted = []
    for position, part in enumerate((header or "")[:500].split(",")):
        tag, _, params = part.strip().partition(";")
        quality = 1.0
        if params.strip().startswith("q="):
            try:
                quality = float(params.strip()[2:])
            except ValueError:
                quality = 0.0
        if tag and tag != "*" and quality > 0:
            weighted.append((-quality, position, tag.strip().lower()))
    return [tag for _, _, tag in sorted(weighted)]


def match(tag: str, codes: list[str]) -> str | None:
    """The code among ``codes`` that serves a browser's language tag, or None."""
    tag = ALIASES.get(tag, tag)
    if tag in codes:
        return tag
    if tag.startswith(TRADITIONAL_CHINESE):
        return None
    primary = tag.split("-")[0]
    if primary == "zh" and tag.startswith("zh-hans"):
        return "zh-hans" if "zh-hans" in codes else None
    return next((code for code in codes if code.split("-")[0] == primary), None)


def choose(batch: Batch, accept_language: str) -> str:
    """The offered language the browser asks for first, else the batch's default."""
    codes = offered(batch)
    for tag in parse_accept_language(accept_language):
        found = match(tag, codes)
        if found:
            return found
    return codes[0]


def settle(batch: Batch, participation: Participation, accept_language: str) -> str:
    """The participant's language: the one stored at their entry, else chosen now and
    stored (once: a later visit with another browser language keeps it)."""
    if participation.language and participation.language in offered(batch):
        return participation.language
    language = choose(batch, accept_language)
    Participation.objects.filter(pk=participation.pk).update(language=language)
    participation.language = language
    return language


@dataclass(frozen=True)
class BatchTexts:
    """The batch's own texts as a participant in one language sees them."""

    instructions: str
    consent_text: str
    scale_labels: dict
    questionnaire: list


def texts_in(batch: Batch, language: str) -> BatchTexts:
    given = (batch.translations or {}).get(language) or {}
    return BatchTexts(
        instructions=given.get("instructions") or batch.instructions,
        consent_text=given.get("consent_text") or batch.consent_text,
        scale_labels={**(batch.scale_labels or {}), **(given.get("scale_labels") or {})},
        questionnaire=_questionnaire_in(batch.questionnaire or [], given.get("questionnaire")),
    )


def _questionnaire_in(original: list, translated: list | None) -> list:
    """The batch's questions with their texts in the participant's language: each
    choice keeps its stored ``value`` (the original option) beside its shown ``label``."""
    by_id = {question["id"]: question for question in translated or []}
    shown = []
    for question in original:
        other = by_id.get(question["id"], {})
        options = question.get("options") or []
        labels = other.get("options") or options
        if len(labels) != len(options):
            labels = options
        shown.append(
            {
                **question,
                "text": other.get("text") or question["text"],
                "choices": [
                    {"value": value, "label": label}
                    for value, label in zip(options, labels, strict=True)
                ],
            }
        )
    return shown


def clean_translations(raw, *, questionnaire: list, label_values: list[int]) -> dict:
    """``Batch.translations`` checked like the texts it translates: each code a shipped
    language; instructions and consent as Markdown of the same limits; button texts for
    the kind's own label values; a questionnaire that asks the batch's questions (same
    ids and types, as many options) through ``questionnaire.clean_definition``.
    ``InvalidInput`` names the setting and what is wrong."""
    from annotation import setting_rules as rules
    from annotation.services import questionnaire as questionnaires

    field = "translations"
    if raw in (None, ""):
        return {}
    if not isinstance(raw, dict):
        raise InvalidInput(field, "must be an object with one entry per language code")
    cleaned = {}
    for code, texts in raw.items():
        where = f"{field}.{code}"
        if code not in shipped():
            raise InvalidInput(field, f"{code!r} is not one of {', '.join(shipped())}")
        if not isinstance(texts, dict):
            raise InvalidInput(where, f"must be an object of {', '.join(TRANSLATED_TEXTS)}")
        unknown = sorted(set(texts) - set(TRANSLATED_TEXTS))
        if unknown:
            raise InvalidInput(
                f"{where}.{unknown[0]}",
                f"is not a translated text (they are: {', '.join(TRANSLATED_TEXTS)})",
            )
        entry = {}
        for name in ("instructions", "consent_text"):
            if texts.get(name) not in (None, ""):
                rules.markdown(f"{where}.{name}", texts[name])
                entry[name] = texts[name]
        if texts.get("scale_labels"):
            entry["scale_labels"] = _clean_scale_labels(
                f"{where}.scale_labels", texts["scale_labels"], label_values
            )
        if texts.get("questionnaire"):
            try:
                asked = questionnaires.clean_definition(
                    _with_original_fields(texts["questionnaire"], questionnaire)
                )
            except InvalidInput as wrong:
                raise InvalidInput(f"{where}.questionnaire", wrong.message) from wrong
            _same_questions(f"{where}.questionnaire", asked, questionnaire)
            entry["questionnaire"] = asked
        cleaned[code] = entry
    return cleaned


def _clean_scale_labels(field: str, labels, label_values: list[int]) -> dict:
    from annotation import setting_rules as rules

    if not isinstance(labels, dict):
        raise InvalidInput(field, "must be an object mapping label value to text")
    cleaned = {}
    for key, text in labels.items():
        if not str(key).lstrip("+-").isdigit() or int(key) not in label_values:
            allowed = ", ".join(str(value) for value in label_values) or "none for this kind"
            raise InvalidInput(f"{field}.{key}", f"is not a label value of this kind ({allowed})")
        rules.line(f"{field}.{key}", text, rules.MAX_BUTTON_TEXT_CHARS)
        cleaned[str(int(key))] = text
    return cleaned


def _with_original_fields(translated, original: list):
    """The translated questions with what a translation need not repeat (type, required,
    bounds) taken from the original question of the same id."""
    if not isinstance(translated, list):
        return translated
    by_id = {question["id"]: question for question in original}
    merged = []
    for question in translated:
        if isinstance(question, dict):
            own = by_id.get(str(question.get("id", "")).strip(), {})
            kept = {key: value for key, value in own.items() if key not in ("text", "options")}
            question = {**kept, **question}
        merged.append(question)
    return merged


def _same_questions(field: str, translated: list, original: list) -> None:
    """A translated questionnaire asks the batch's own questions, so that every
    participant's answers are stored alike (a choice stores the original option)."""
    by_id = {question["id"]: question for question in original}
    for question in translated:
        own = by_id.get(question["id"])
        if own is None:
            raise InvalidInput(field, f"question {question['id']!r} is not in the questionnaire")
        if question["type"] != own["type"]:
            raise InvalidInput(
                field,
                f"question {question['id']!r} must be of type {own['type']}, like the original",
            )
        if len(question.get("options") or []) != len(own.get("options") or []):
            raise InvalidInput(
                field,
                f"question {question['id']!r} must have {len(own.get('options') or [])} options, "
                "in the original's order",
            )


def parse_translations(text: str) -> dict:
    """The translations from the text of a form field or a file (YAML, which also reads
    JSON; empty: none)."""
    from annotation.services import questionnaire as questionnaires

    if not (text or "").strip():
        return {}
    parsed = questionnaires.parse_file_text(text, "the translations", field="translations")
    if not isinstance(parsed, dict):
        raise InvalidInput("translations", "must be an object with one entry per language code")
    return parsed
