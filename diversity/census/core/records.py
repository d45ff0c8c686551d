"""The census cell every reader produces and every figure consumes."""

from dataclasses import dataclass

__all__ = ["CensusRecord"]


@dataclass(frozen=True)
class CensusRecord:
    """One cell of the census: what ``model`` replied in run ``run`` of ``category``."""

    model: str
    category: str
    run: int
    reply: str | None
