"""Batches the score-import tests (test_scores.py, test_score_distributions.py) import
scores for: the factory's batches, whose response ids ``rid`` knows."""

import pytest

from tests.factories import make_batch


@pytest.fixture
def absolute():
    return make_batch(kind="absolute", n_items=4)


@pytest.fixture
def pairwise():
    return make_batch(kind="pairwise", n_items=3)
