"""The guarantees, checked directly in PostgreSQL after each run on the platform.

Over the whole batch:

* every item: counted labels <= N, and ``counted_count`` = its number of counted labels
  (and ``reserved_count`` = counted labels + open leases, the other counter);
* no (annotator, item) pair has two labels.

Over the run's annotators (their worker ids share the run's prefix):

* every label the client saw acknowledged (2xx) is stored;
* every stored label was acknowledged, or its request got no answer (cut off at the end,
  a network error or a 5xx): for those, stored and not stored are both fine.
"""

from __future__ import annotations

from bench.crowd.setup_db import Database


def check(db: Database, slug: str, worker_prefix: str, acked, unknown, refused) -> dict:
    acked, unknown, refused = set(acked), set(unknown), set(refused)
    with db.connect() as conn:
        batch_id, n = conn.execute(
            "SELECT id, annotations_per_item FROM annotation_batch WHERE slug = %s", [slug]
        ).fetchone()
        over_n, counter_mismatch, reserved_mismatch = conn.execute(
            """
            WITH counts AS (
                SELECT i.id, i.counted_count, i.reserved_count,
                       (SELECT COUNT(*) FROM annotation_label l
                         WHERE l.item_id = i.id AND l.status = 'counted') AS counted,
                       (SELECT COUNT(*) FROM annotation_assignment a
                         WHERE a.item_id = i.id AND a.state = 'open') AS open_leases
                FROM annotation_item i WHERE i.batch_id = %s
            )
            SELECT COUNT(*) FILTER (WHERE counted > %s),
                   COUNT(*) FILTER (WHERE counted_count <> counted),
                   COUNT(*) FILTER (WHERE reserved_count <> counted + open_leases)
            FROM counts
            """,
            [batch_id, n],
        ).fetchone()
        duplicates = conn.execute(
            """
            SELECT COUNT(*) FROM (
                SELECT annotator_id, item_id FROM annotation_label
                GROUP BY annotator_id, item_id HAVING COUNT(*) > 1
            ) d
            """
        ).fetchone()[0]
        stored = {
            str(row[0])
            for row in conn.execute(
                """
                SELECT l.assignment_id FROM annotation_label l
                JOIN annotation_annotator a ON a.id = l.annotator_id
                WHERE l.batch_id = %s AND a.platform = 'generic'
                  AND a.platform_id LIKE %s
                """,
                [batch_id, worker_prefix + "%"],
            )
        }
        statuses = dict(
            conn.execute(
                """
                SELECT l.status, COUNT(*) FROM annotation_label l
                JOIN annotation_annotator a ON a.id = l.annotator_id
                WHERE l.batch_id = %s AND a.platform_id LIKE %s GROUP BY l.status
                """,
                [batch_id, worker_prefix + "%"],
            ).fetchall()
        )
    lost = acked - stored
    unacknowledged = stored - acked - unknown
    refused_stored = refused & stored
    result = {
        "items_over_n": over_n,
        "counted_count_mismatches": counter_mismatch,
        "reserved_count_mismatches": reserved_mismatch,
        "duplicate_annotator_item_labels": duplicates,
        "acknowledged": len(acked),
        "stored_for_run": len(stored),
        "stored_by_status": statuses,
        "acknowledged_but_missing": len(lost),
        "stored_but_unacknowledged": len(unacknowledged),
        "unknown_outcome": len(unknown),
        "unknown_outcome_stored": len(unknown & stored),
        "refused_but_stored": len(refused_stored),
        "examples_missing": sorted(lost)[:5],
        "examples_unacknowledged": sorted(unacknowledged)[:5],
    }
    result["ok"] = (
        not (
            over_n or counter_mismatch or reserved_mismatch or duplicates or lost or unacknowledged
        )
        and not refused_stored
    )
    return result
