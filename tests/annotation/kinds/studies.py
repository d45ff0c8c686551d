"""Studies of the kinds whose items are texts kept in ``Item.content`` (``short_text``,
``similarity``), built through the real services: ``create_batch``, ``import_items`` (an
items file as a researcher would upload it) and ``change_state``."""

import io

from annotation.models import Batch
from tests.factories import imported_batch
from tests.files import named_upload

CENSUS_PROMPTS = [
    ("color", "Name a color. Reply with one word only."),
    ("animal", "Name an animal. Reply with one word only."),
    ("fruit", "Name a fruit. Reply with one word only."),
    ("city", "Name a city. Reply with one word only."),
    ("sport", "Name a sport. Reply with one word only."),
    ("bird", "Name a bird. Reply with one word only."),
]


def item_rows(kind: str, n_items: int, prefix: str) -> list[dict]:
    """``n_items`` rows of an items file of ``kind``; item ids are ``item-<index>``."""
    rows = []
    for index in range(n_items):
        category, prompt = CENSUS_PROMPTS[index % len(CENSUS_PROMPTS)]
        row = {"item_id": f"item-{index}", "query_id": f"{prefix}-q{index}", "category": category}
        if kind == "short_text":
            row["query"] = f"{prompt} (#{index})"
        elif kind == "similarity":
            row.update(
                query=f"What is the capital of country {index}?",
                reference=f"Reference answer {index}: the capital is City {index}.",
                candidate=f"Candidate answer {index}: it is City {index}.",
                question_id=f"genie-q{index}",
                feature="capital",
            )
        else:
            raise ValueError(f"no rows for kind {kind!r}")
        rows.append(row)
    return rows


def items_file(rows: list[dict], name: str = "items.jsonl") -> io.BytesIO:
    return named_upload(name, rows)


def make_study(
    kind: str,
    *,
    slug: str,
    n_items: int = 3,
    per_item: int = 3,
    live: bool = True,
    kind_settings: dict | None = None,
    **settings,
) -> Batch:
    """A batch of ``kind`` with ``n_items`` imported items, published unless ``live`` is
    false."""
    settings.update(title=f"Study {slug}", kind_settings=kind_settings)
    rows = item_rows(kind, n_items, slug)
    return imported_batch(kind, rows, slug=slug, per_item=per_item, live=live, **settings)
