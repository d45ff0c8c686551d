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
