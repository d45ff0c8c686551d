"""What a stored report's batch kind declares, asked of the kind registry.

A report carries only its batch's kind name (``report["kind"]``); the pages and charts that
read a report ask the kind itself what it is, so that no part of the analysis tests a name.
"""

from collections.abc import Mapping

from annotation.kinds import all_kinds


def compares_two(report: Mapping) -> bool:
    """Whether the report's labels compare two responses (``TaskKind.comparison``): signed
    preferences between a pair rather than ratings of one response. A kind no longer
    configured counts as rating one response."""
    kind = all_kinds().get(report["kind"])
    return bool(kind is not None and kind.comparison)
