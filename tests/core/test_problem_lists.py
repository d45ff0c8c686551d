"""Every importer lists a refused file's problems alike (core.problem_lists)."""

import pytest

from core.problem_lists import MAX_LISTED_PROBLEMS, RejectedWhole, first_problems
from diversity.census.sources import CensusInputError
from diversity.genie.records import JudgmentFileError


def _problems(n: int) -> list[str]:
    return [f"f.csv:{line}: value: bad" for line in range(1, n + 1)]


@pytest.mark.parametrize(
    ("n", "last"),
    [
        (MAX_LISTED_PROBLEMS, f"f.csv:{MAX_LISTED_PROBLEMS}: value: bad"),
        (MAX_LISTED_PROBLEMS + 1, "... and 1 more problem"),
        (MAX_LISTED_PROBLEMS + 7, "... and 7 more problems"),
    ],
)
def test_the_first_problems_then_how_many_more(n, last):
    listed = first_problems(_problems(n))
    assert listed[:MAX_LISTED_PROBLEMS] == _problems(n)[:MAX_LISTED_PROBLEMS]
    assert listed[-1] == last and len(listed) == min(n, MAX_LISTED_PROBLEMS + 1)


@pytest.mark.parametrize("error", [RejectedWhole, CensusInputError, JudgmentFileError])
def test_the_readers_errors_keep_every_problem_and_say_the_first(error):
    raised = error(_problems(60))
    assert raised.problems == _problems(60)
    assert str(raised).splitlines() == first_problems(_problems(60))
