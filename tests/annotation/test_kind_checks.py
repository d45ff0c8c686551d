"""The system check of the TASK_KINDS setting: a bad entry stops start-up with a message
that names it (``annotation.checks``). Plain checks, no database."""

from django.test import override_settings

from annotation.checks import task_kinds_are_valid
from annotation.kinds.base import ChoiceKind, KindSetting, Scale
from annotation.kinds.pairwise import PairwiseKind

DEFAULT = [
    "annotation.kinds.absolute.AbsoluteKind",
    "annotation.kinds.pairwise.PairwiseKind",
    "annotation.kinds.short_text.ShortTextKind",
    "annotation.kinds.similarity.SimilarityKind",
]


class RepeatedValueKind(ChoiceKind):
    name = "repeated"
    label = "Repeats a value"
    scale = Scale(((1, "No"), (2, "Yes"), (1, "No again")))


class NoScaleKind(ChoiceKind):
    name = "no_scale"
    label = "Chooses from nothing"


class BadSettingKind(ChoiceKind):
    name = "bad_setting"
    label = "Bad settings"
    scale = Scale(((1, "One"), (2, "Two")))
    settings = (
        KindSetting("mode", "Mode", "fast", choices=("slow", "careful")),
        KindSetting("mode", "Mode again", 1),
    )


class SecondPairwiseKind(PairwiseKind):
    """Another class that takes the name ``pairwise``."""


class NotAKind:
    name = "not_a_kind"


def messages(paths) -> list[tuple[str, str]]:
    with override_settings(TASK_KINDS=paths):
        return [(error.id, error.msg) for error in task_kinds_are_valid()]


def test_the_shipped_kinds_pass():
    assert messages(DEFAULT) == []


def test_an_entry_that_does_not_import_is_named():
    [(check_id, message)] = messages([*DEFAULT, "annotation.kinds.nowhere.NowhereKind"])
    assert check_id == "annotation.E003"
    assert "'annotation.kinds.nowhere.NowhereKind' does not import" in message


def test_an_entry_that_is_not_a_kind_class_is_named():
    [(check_id, message)] = messages([*DEFAULT, f"{__name__}.NotAKind"])
    assert check_id == "annotation.E004"
    assert message == f"TASK_KINDS entry '{__name__}.NotAKind' is not a TaskKind subclass"


def test_two_kinds_with_one_name_are_refused():
    [(check_id, message)] = messages([*DEFAULT, f"{__name__}.SecondPairwiseKind"])
    assert check_id == "annotation.E006"
    assert message == (
        "kinds 'annotation.kinds.pairwise.PairwiseKind' and "
        f"'{__name__}.SecondPairwiseKind' are both named 'pairwise'"
    )


def test_a_scale_must_have_distinct_values():
    [(check_id, message)] = messages([*DEFAULT, f"{__name__}.RepeatedValueKind"])
    assert check_id == "annotation.E009"
    assert message == f"kind '{__name__}.RepeatedValueKind': the scale repeats the value(s) [1]"
    assert messages([f"{__name__}.NoScaleKind"]) == [
        ("annotation.E008", f"kind '{__name__}.NoScaleKind' chooses but has no scale")
    ]


def test_settings_must_have_distinct_names_and_a_default_among_their_choices():
    found = messages([f"{__name__}.BadSettingKind"])
    path = f"{__name__}.BadSettingKind"
    assert found == [
        ("annotation.E010", f"kind '{path}': two settings are named 'mode'"),
        (
            "annotation.E011",
            f"kind '{path}': setting 'mode' defaults to 'fast', not one of its choices "
            "('slow', 'careful')",
        ),
    ]


def test_an_empty_or_malformed_setting_is_refused():
    assert messages([]) == [
        ("annotation.E001", "TASK_KINDS must be a non-empty list of dotted paths")
    ]
    assert messages([*DEFAULT, 3]) == [
        ("annotation.E002", "TASK_KINDS entry 3 is not a dotted path")
    ]
