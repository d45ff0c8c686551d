"""The optional background questionnaire of a batch, asked once after consent.

A questionnaire is a list of questions (JSON, or YAML in a file for ``create_batch
--questionnaire FILE``)::

    - id: native_english          # letters, digits, _ and -; unique
      text: Is English your first language?
      type: choice                # choice | number | text
      options: [yes, no]          # choice only
      required: true              # default true
    - id: age
      text: Your age in years
      type: number
      min: 18                     # number only, optional
      max: 100

``clean_definition`` checks a definition (every problem names the question and field);
``clean_answers`` checks one worker's answers against it. Answers are stored per
participation, exported in the annotators layout as ``q_<id>`` columns, and never
rendered unescaped.
"""

import re
from typing import Any

import yaml
from django.utils.formats import number_format
from django.utils.translation import gettext

from core.errors import InvalidInput
from core.text import first_control_character

TYPES = ("choice", "number", "text")
ID_PATTERN = re.compile(r"^[A-Za-z][A-Za-z0-9_-]{0,39}$")
MAX_QUESTIONS = 30
MAX_TEXT_CHARS = 500
MAX_QUESTION_CHARS = 1000
MAX_OPTIONS = 30


# A questionnaire of MAX_QUESTIONS questions with their texts and options fits in this
# many characters; the YAML reader reads nothing longer.
MAX_FILE_CHARS = 256 * 1024
# A questionnaire nests three levels (the list, a question, its options); YAML's composer
# recurses once per level, so a file thousands of brackets deep would exhaust the stack.
MAX_YAML_DEPTH = 8


class _QuestionnaireLoader(yaml.BaseLoader):
    """YAML's BaseLoader (every scalar is text) without anchors and aliases, and with a
    nesting limit: a few hundred bytes of nested aliases expand into gigabytes (the
    "billion laughs"), and a questionnaire has no use for either."""

    def compose_node(self, parent, index):
        event = self.peek_event()
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise yaml.YAMLError(
                f"anchors and aliases (&, *) are not accepted (line {event.start_mark.line + 1})"
            )
        self._depth = getattr(self, "_depth", 0) + 1
        try:
            if self._depth > MAX_YAML_DEPTH:
                raise yaml.YAMLError(
                    f"nested deeper than {MAX_YAML_DEPTH} levels (line {event.start_mark.line + 1})"
                )
            return super().compose_node(parent, index)
        finally:
            self._depth -= 1


def parse_file_text(text: str, name: str, field: str = "questionnaire"):
    """A questionnaire file (YAML, which also reads JSON) as a list of questions.

    Every scalar is read as text (YAML's BaseLoader), so that options such as ``yes`` and
    ``no`` stay the words they are instead of turning into true and false;
    ``clean_definition`` reads the numbers and flags it expects. Files over
    ``MAX_FILE_CHARS``, anchors and aliases, and nesting deeper than ``MAX_YAML_DEPTH``
    are refused before anything is built.
    """
    if len(text) > MAX_FILE_CHARS:
        raise InvalidInput(
            field,
            f"{name} has {len(text):,} characters; at most {MAX_FILE_CHARS:,} are accepted",
        )
    try:
        parsed = yaml.load(text, Loader=_QuestionnaireLoader)  # noqa: S506 - plain data only
    except yaml.YAMLError as error:
        raise InvalidInput(field, f"{name} is not valid YAML or JSON: {error}") from error
    return parsed if parsed is not None else []


def clean_definition(raw: Any) -> list[dict]:
    """The questions in a normal form; ``InvalidInput("questionnaire", ...)`` otherwise."""
    if raw in (None, ""):
        return []
    if not isinstance(raw, list):
        raise InvalidInput("questionnaire", "must be a list of questions")
    if len(raw) > MAX_QUESTIONS:
        raise InvalidInput("questionnaire", f"has more than {MAX_QUESTIONS} questions")
    cleaned, seen = [], set()
    for number, question in enumerate(raw, start=1):
        where = f"question {number}"
        if not isinstance(question, dict):
            raise InvalidInput("questionnaire", f"{where} must be an object")
        qid = str(question.get("id", "")).strip()
        if not ID_PATTERN.match(qid):
            raise InvalidInput(
                "questionnaire", f"{where}: id must be letters, digits, _ or - (got {qid!r})"
            )
        if qid in seen:
            raise InvalidInput("questionnaire", f"{where}: id {qid!r} is used twice")
        seen.add(qid)
        where = f"question {qid!r}"
        text = str(question.get("text", "")).strip()
        if not text or len(text) > MAX_QUESTION_CHARS:
            raise InvalidInput(
                "questionnaire", f"{where}: text must be 1 to {MAX_QUESTION_CHARS} characters"
            )
        kind = question.get("type", "text")
        if kind not in TYPES:
            raise InvalidInput("questionnaire", f"{where}: type must be one of {', '.join(TYPES)}")
        entry: dict = {
            "id": qid,
            "text": text,
            "type": kind,
            "required": _flag(question.get("required", True), f"{where}: required"),
        }
        if kind == "choice":
            options = question.get("options")
            if not isinstance(options, list) or not 2 <= len(options) <= MAX_OPTIONS:
                raise InvalidInput(
                    "questionnaire", f"{where}: a choice needs 2 to {MAX_OPTIONS} options"
                )
            # a JSON true/false or null would be shown as "True"/"False"/"None" in every
            # language: options are texts (or plain numbers, shown as written)
            if any(isinstance(option, bool) or not isinstance(option, str | int | float)
                   for option in options):  # fmt: skip
                raise InvalidInput(
                    "questionnaire",
                    f"{where}: options must be texts (write yes/no or true/false in quotes)",
                )
            texts = [str(option).strip() for option in options]
            if any(not option for option in texts) or len(set(texts)) != len(texts):
                raise InvalidInput("questionnaire", f"{where}: options must be distinct texts")
            entry["options"] = texts
        if kind == "number":
            for bound in ("min", "max"):
                if question.get(bound) not in (None, ""):
                    entry[bound] = _number(question[bound], f"{where}: {bound}")
        for field in ("id", "text"):
            if first_control_character(str(entry[field])) is not None:
                raise InvalidInput("questionnaire", f"{where}: {field} has a control character")
        cleaned.append(entry)
    return cleaned


def _flag(value, where: str) -> bool:
    if isinstance(value, bool):
        return value
    word = str(value).strip().lower()
    if word in ("true", "yes", "1"):
        return True
    if word in ("false", "no", "0"):
        return False
    raise InvalidInput("questionnaire", f"{where} must be true or false")


def _number(value, where: str) -> int | float:
    if isinstance(value, bool):
        raise InvalidInput("questionnaire", f"{where} must be a number")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise InvalidInput("questionnaire", f"{where} must be a number") from None
    return int(number) if number.is_integer() else number


class AnswersRefused(InvalidInput):
    """Every problem of a questionnaire's answers (``problems``: question id -> message);
    as an ``InvalidInput`` it names the first."""

    def __init__(self, problems: dict[str, str]):
        field, message = next(iter(problems.items()))
        super().__init__(field, message)
        self.problems = problems


def clean_answers(definition: list[dict], raw: dict) -> dict:
    """One worker's answers, checked; ``AnswersRefused`` lists every question with a
    problem (a missing answer, a choice not offered, a number out of range...)."""
    answers, problems = {}, {}
    for question in definition:
        try:
            answers[question["id"]] = _clean_answer(question, raw.get(question["id"]))
        except InvalidInput as wrong:
            problems[question["id"]] = wrong.message
    if problems:
        raise AnswersRefused(problems)
    return answers


def _clean_answer(question: dict, value):
    qid = question["id"]
    if isinstance(value, str):
        value = value.strip()
    if value in (None, ""):
        if question["required"]:
            raise InvalidInput(qid, gettext("please answer this question"))
        return None
    kind = question["type"]
    if kind == "choice":
        if value not in question["options"]:
            raise InvalidInput(qid, gettext("please choose one of the options"))
    elif kind == "number":
        try:
            value = float(value)
        except (TypeError, ValueError):
            raise InvalidInput(qid, gettext("please give a number")) from None
        if value != value or value in (float("inf"), float("-inf")):
            raise InvalidInput(qid, gettext("please give a number"))
        if value.is_integer():
            value = int(value)
        low, high = question.get("min"), question.get("max")
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = {"low": number_format(low), "high": number_format(high)}
            if low is not None and high is not None:
                problem = gettext("please give a number between %(low)s and %(high)s")
            elif low is not None:
                problem = gettext("please give a number of at least %(low)s")
            else:
                problem = gettext("please give a number of at most %(high)s")
            raise InvalidInput(qid, problem % bounds)
    else:
        value = str(value)
        if len(value) > MAX_TEXT_CHARS:
            raise InvalidInput(
                qid,
                gettext("please keep it under %(count)s characters")
                % {"count": number_format(MAX_TEXT_CHARS)},
            )
        if first_control_character(value) is not None:
            raise InvalidInput(qid, gettext("please remove the control character (e.g. a tab)"))
    return value


def record_answers(batch, participation, raw: dict) -> dict:
    """Check and store a worker's answers (once; a second submission changes nothing)."""
    from django.db import transaction
    from django.utils import timezone

    from annotation.models import Participation
    from core.locking import lock_rows

    answers = clean_answers(batch.questionnaire or [], raw)
    with transaction.atomic():
        locked = lock_rows(Participation.objects.filter(pk=participation.pk)).get()
        if locked.answered_at is None:
            locked.questionnaire_answers = answers
            locked.answered_at = timezone.now()
            locked.save(update_fields=["questionnaire_answers", "answered_at"])
    participation.questionnaire_answers = locked.questionnaire_answers
    participation.answered_at = locked.answered_at
    return locked.questionnaire_answers


def choice_questions(definition: list[dict]) -> list[dict]:
    """The questions the analysis can group by (choice questions)."""
    return [question for question in definition or [] if question["type"] == "choice"]
