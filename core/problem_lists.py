"""How a refused file's problems are listed, by every importer: the first
``MAX_LISTED_PROBLEMS``, then one line saying how many more there are (FORMATS.md). Pure:
no Django, so the census and Genie readers use it too."""

MAX_LISTED_PROBLEMS = 50


def more_problems(more: int) -> str:
    """The line that stands for the ``more`` problems not listed."""
    return f"... and {more} more problem{'s' if more != 1 else ''}"


def first_problems(problems: list[str]) -> list[str]:
    """The first ``MAX_LISTED_PROBLEMS`` of ``problems``, and how many more there are."""
    listed = problems[:MAX_LISTED_PROBLEMS]
    if len(problems) > len(listed):
        listed.append(more_problems(len(problems) - len(listed)))
    return listed


class RejectedWhole(ValueError):
    """An input rejected whole: ``problems`` holds every problem found, the message the
    first of them (``first_problems``), one a line."""

    def __init__(self, problems: list[str]):
        super().__init__("\n".join(first_problems(problems)))
        self.problems = problems
