"""The census reads the one normalisation rule (``annotation.normalisers.census``, tested in
``tests/annotation/test_normalisers.py``) through ``diversity.census.core.normalise``, and merges
plurals within a category of the field only."""

from annotation.normalisers import census as rule
from diversity.census.core import normalise
from diversity.census.core.field import build_field
from diversity.census.transcripts import CensusRecord


def test_census_uses_the_one_rule():
    assert normalise.normalise_reply is rule.normalise_reply
    assert normalise.failed_reason is rule.failed_reason
    assert normalise.merge_plurals is rule.merge_plurals
    assert normalise.FailedReason is rule.FailedReason


def test_field_merges_plurals_within_a_category_only():
    records = [
        CensusRecord("m1", "pet", 0, "Cats"),
        CensusRecord("m2", "pet", 0, "Cat."),
        CensusRecord("m1", "animal", 0, "Dogs"),
        CensusRecord("m2", "toy", 0, "Dog"),
    ]
    answers = build_field(records).answers
    assert answers["pet"] == {"m1": ("cat",), "m2": ("cat",)}
    assert answers["animal"] == {"m1": ("dogs",)}  # "dog" occurs in another category only
