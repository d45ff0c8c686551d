"""Bundled batches for the tests: queries × responses imported from a file, as a
researcher would (``bundle_by=query``), of the absolute or the pairwise kind."""

import io
import json

from annotation.services.batches import change_state, create_batch
from annotation.services.importing import import_items


def bundled_batch(
    slug: str,
    *,
    n_queries: int = 3,
    per_query: int = 5,
    per_item: int = 2,
    kind: str = "absolute",
    checks: int = 0,
    **settings,
):
    settings.setdefault("bundle_by", "query")
    batch = create_batch(slug=slug, kind=kind, annotations_per_item=per_item, **settings)
    rows = []
    for query in range(n_queries):
        for response in range(per_query):
            row = {
                "item_id": f"{slug}-q{query}-r{response}",
                "query_id": f"{slug}-q{query}",
                "query": f"Question {query}?",
                "form": f"form-{query % 2}",
            }
            if kind == "pairwise":
                row.update(
                    response_a_id=f"{slug}-a{query}-{response}",
                    response_a=f"A {query}.{response}",
                    response_b_id=f"{slug}-b{query}-{response}",
                    response_b=f"B {query}.{response}",
                )
            else:
                row.update(
                    response_id=f"{slug}-r{query}-{response}",
                    response=f"Answer {query}.{response}",
                    model=f"model-{response % 3}",
                )
            rows.append(row)
    for number in range(checks):
        check = {
            "item_id": f"{slug}-check{number}",
            "query_id": f"{slug}-check-q{number}",
            "query": "Attention: choose 5.",
            "check": True,
            "gold": 5 if kind == "absolute" else [2],
        }
        if kind == "pairwise":
            check.update(
                response_a_id=f"{slug}-ca{number}",
                response_a="Choose A",
                response_b_id=f"{slug}-cb{number}",
                response_b="Choose B",
            )
        else:
            check.update(response_id=f"{slug}-cr{number}", response="Choose 5.")
        rows.append(check)
    lines = "".join(json.dumps(row) + "\n" for row in rows)
    import_items(batch, io.BytesIO(lines.encode()), filename="bundled.jsonl")
    return change_state(batch, "live")
