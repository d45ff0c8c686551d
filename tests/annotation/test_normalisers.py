"""The normalisers of written answers: the census rule (docs/CENSUS.md's junk guard,
normalisation steps and plural merge, one rule at a time), the ``lowercase`` rule, and the
registry a batch picks one from."""

import pytest

from annotation.normalisers import DEFAULT_NORMALISER, NORMALISERS, get_normaliser
from annotation.normalisers.census import (
    FailedReason,
    failed_reason,
    merge_plurals,
    normalise_reply,
)
from annotation.normalisers.lowercase import normalise_answer

# --------------------------------------------------------------------------- junk guard


def assert_failed(reply, reason):
    assert failed_reason(reply) == reason
    assert normalise_reply(reply) is None


@pytest.mark.parametrize("reply", [None, "", "   \n\t"])
def test_empty_or_missing_reply_is_failed(reply):
    assert_failed(reply, FailedReason.EMPTY)


@pytest.mark.parametrize("reply", ["Blue [INST]", "[/INST] Blue", "red[INST]green"])
def test_instruction_marker_is_failed(reply):
    assert_failed(reply, FailedReason.INSTRUCTION_MARKER)


def test_instruction_marker_is_case_sensitive_bracketed_text():
    # Only the literal markers count; other bracketed words are stripped by step 2.
    assert failed_reason("[inst] blue") is None
    assert normalise_reply("[Answer] blue") == "blue"


@pytest.mark.parametrize("reply", ["<think>blue</think>", "Blue </s>", "<|endoftext|>", "a<b>"])
def test_tag_is_failed(reply):
    assert_failed(reply, FailedReason.TAG)


def test_lone_angle_brackets_are_not_a_tag():
    # No "<" ... ">" pair: ">" is only punctuation (step 2), "<" stays part of its word.
    assert normalise_reply("> blue") == "blue"
    assert normalise_reply("blue >") == "blue"
    assert normalise_reply("green <3") == "green"


@pytest.mark.parametrize("reply", ["Thinking... blue", "blue (THINKING)", "I'm thinking: red"])
def test_thinking_word_is_failed(reply):
    assert_failed(reply, FailedReason.THINKING)


def test_thinking_must_be_a_whole_word():
    assert normalise_reply("Rethinking") == "rethinking"
    assert normalise_reply("thinkings") == "thinkings"


@pytest.mark.parametrize(
    "reply", ["okay", "OK", "Sure.", "certainly!", "Alright", "  okay.  ", "oK!"]
)
def test_bare_acknowledgement_is_failed(reply):
    assert_failed(reply, FailedReason.ACKNOWLEDGEMENT)


def test_acknowledgement_allows_one_trailing_mark_only():
    # Not a bare acknowledgement, so the reply is normalised and "okay" becomes the answer.
    assert failed_reason("Okay..") is None
    assert normalise_reply("Okay..") == "okay"
    assert normalise_reply("Okay!?") == "okay"
    assert normalise_reply("Sure, blue.") == "blue"


def test_more_than_fifteen_words_is_failed():
    fifteen = " ".join(["word"] * 14 + ["blue"])
    assert normalise_reply(fifteen) == "blue"
    assert_failed(fifteen + " red", FailedReason.TOO_LONG)


def test_word_count_uses_whitespace_on_the_raw_reply():
    # 16 whitespace-separated tokens (punctuation tokens included) are too many.
    reply = "blue " + " ".join(["-"] * 15)
    assert len(reply.split()) == 16
    assert_failed(reply, FailedReason.TOO_LONG)


@pytest.mark.parametrize("reply", ["Soufflé", "!!!", "a", "4ever", "∞", "🌈"])
def test_no_candidate_is_failed(reply):
    assert_failed(reply, FailedReason.NO_CANDIDATE)


# --------------------------------------------------------------------------- normalisation


def test_step1_trims_and_lowercases():
    assert normalise_reply("  BLUE \n") == "blue"


@pytest.mark.parametrize("character", list("*_`#>[]().,!?\"':;"))
def test_step2_each_listed_character_separates_words(character):
    assert normalise_reply(f"red{character}green") == "green"
    assert normalise_reply(f"{character}green{character}") == "green"


@pytest.mark.parametrize("character", ["\\", "{", "}", "/", "é", "ʃ", "+", "="])
def test_step2_other_characters_stay_in_their_word(character):
    # The word with the character is no candidate, so the answer is the word before it.
    assert normalise_reply(f"red green{character}x") == "red"


@pytest.mark.parametrize(
    "emoji", ["\U0001f499", "\U0001f000", "\U0001faff", "\u2600", "\u2728", "\u27bf"]
)
def test_step3_emoji_separate_words(emoji):
    assert normalise_reply(f"blue{emoji}") == "blue"
    assert normalise_reply(f"{emoji}blue") == "blue"


@pytest.mark.parametrize("symbol", ["\u2122", "\u25a0", "\U0001fb00", "\u27c0"])
def test_step3_characters_outside_the_emoji_blocks_stay(symbol):
    assert normalise_reply(f"red blue{symbol}") == "red"


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("ice-cream", "ice-cream"),
        ("Route 66", "66"),
        ("Number 7", "7"),  # a one-digit number is a candidate
        ("Blue a", "blue"),  # a one-letter word is not
        ("red 4ever", "red"),  # letters and digits mixed: not a candidate
        ("red -", "red"),  # a lone hyphen is one character
    ],
)
def test_step4_candidate_words(reply, answer):
    assert normalise_reply(reply) == answer


def test_step5_answer_is_the_last_candidate():
    assert normalise_reply("Red, green, blue") == "blue"
    assert normalise_reply("blue café") == "blue"


@pytest.mark.parametrize(
    ("reply", "answer"),
    [
        ("Blue.", "blue"),
        ("A common color is blue.", "blue"),
        ("Chocolate cake", "cake"),
        ("Soufflé", None),
        ("(kroa:ʃi.a)", "kroa"),
        ("Blue\n\\confidence{100}", "blue"),
        ("Okay.", None),
    ],
)
def test_census_md_examples(reply, answer):
    assert normalise_reply(reply) == answer


# --------------------------------------------------------------------------- plural merge


def test_plural_is_merged_when_singular_occurs():
    assert merge_plurals(["cats", "cat", "dog"]) == {"cats": "cat", "cat": "cat", "dog": "dog"}


def test_plural_stays_without_its_singular():
    assert merge_plurals(["brownies", "cake"]) == {"brownies": "brownies", "cake": "cake"}
    # "brownie" + "s" is "brownies": only the exact form without the final s merges.
    assert merge_plurals(["brownies", "brownie"])["brownies"] == "brownie"


def test_word_ending_in_s_without_a_shorter_form_stays():
    assert merge_plurals(["glass", "hibiscus"]) == {"glass": "glass", "hibiscus": "hibiscus"}


def test_only_one_final_s_is_dropped_and_order_does_not_matter():
    forward = merge_plurals(["catss", "cats", "cat"])
    assert forward == {"catss": "cats", "cats": "cat", "cat": "cat"}
    assert merge_plurals(["cat", "cats", "catss"]) == forward


# --------------------------------------------------------------------------- lowercase


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("  The Beatles. ", "the beatles"),
        ("New\tYork!!", "new york"),
        ("new   york", "new york"),
        ("“Hamlet”", "hamlet"),
        ("(Paris)", "paris"),
        ("rock 'n' roll", "rock 'n' roll"),  # inner punctuation stays
        ("C++", "c++"),  # symbols are part of the answer
        ("C#", "c#"),
        ("Soufflé", "soufflé"),  # any letter, unlike the census rule
        ("¿Qué?", "qué"),
        ("“ blue ”", "blue"),  # spaces left inside stripped quotes go too
        ("🌈", "🌈"),
    ],
)
def test_lowercase_rule(text, answer):
    assert normalise_answer(text) == answer


@pytest.mark.parametrize("text", [None, "", "   ", "?!", "...", "“”"])
def test_lowercase_rule_leaves_nothing_of_punctuation_only(text):
    assert normalise_answer(text) is None


# --------------------------------------------------------------------------- registry


def test_registry_offers_census_by_default_and_lowercase():
    assert DEFAULT_NORMALISER == "census"
    assert {"census", "lowercase"} <= set(NORMALISERS)
    assert get_normaliser("census").normalise("A common color is blue.") == "blue"
    assert get_normaliser("lowercase").normalise("A common color is blue.") == (
        "a common color is blue"
    )
    with pytest.raises(KeyError):
        get_normaliser("stemmer")
