"""Bundled batches for the tests: queries × responses imported from a file, as a
researcher would (``bundle_by=query``), of the absolute or the pairwise kind."""

from tests.factories import imported_batch, pair_columns


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
                a = (f"{slug}-a{query}-{response}", f"A {query}.{response}")
                b = (f"{slug}-b{query}-{response}", f"B {query}.{response}")
                row.update(pair_columns(a, b))
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
                pair_columns((f"{slug}-ca{number}", "Choose A"), (f"{slug}-cb{number}", "Choose B"))
            )
        else:
            check.update(response_id=f"{slug}-cr{number}", response="Choose 5.")
        rows.append(check)
    return imported_batch(
        kind, rows, slug=slug, per_item=per_item, filename="bundled.jsonl", **settings
    )
