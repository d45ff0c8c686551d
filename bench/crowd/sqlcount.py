"""SQL statements per request, counted in-process on the benchmark's database.

PostgreSQL's ``pg_stat_statements`` needs ``shared_preload_libraries`` (a server
restart), so the statements are counted where they are sent: Django's test ``Client``
runs the real requests (same settings and middleware, ``DEBUG=0``, as a browser behind
the TLS proxy, CSRF enforced) against the benchmark's PostgreSQL database inside
``CaptureQueriesContext``. Run by ``run.py`` in its own process with the platform's
environment:

    python -m bench.crowd.sqlcount SLUG --cycles 20     # prints JSON
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def _counted(client, method: str, path: str, **kwargs):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        response = getattr(client, method)(path, **kwargs)
    return response, [q["sql"] for q in captured.captured_queries]


def _is_transaction_control(sql: str) -> bool:
    return sql.split(" ", 1)[0].upper() in {"SAVEPOINT", "RELEASE", "ROLLBACK", "BEGIN", "COMMIT"}


def measure(slug: str, cycles: int) -> dict:
    import django

    django.setup()
    from django.test import Client

    secure = {"secure": True, "headers": {"Origin": "https://127.0.0.1"}}
    host = {"HTTP_HOST": "127.0.0.1"}
    kinds = ("entry", "consent", "task", "next", "label")
    per_kind: dict[str, list[int]] = {kind: [] for kind in kinds}
    per_kind_sql: dict[str, list[int]] = {kind: [] for kind in kinds}
    samples: dict[str, list[str]] = {}
    next_bytes: list[int] = []

    def record(kind, statements):
        per_kind[kind].append(len(statements))
        per_kind_sql[kind].append(sum(1 for sql in statements if not _is_transaction_control(sql)))
        samples.setdefault(kind, statements)

    # a few annotators, so that the per-request figures are not one session's accident
    for n in range(max(1, cycles // 10)):
        client = Client(enforce_csrf_checks=True, **host)
        worker = f"sqlcount-{uuid.uuid4().hex[:12]}-{n}"
        response, statements = _counted(
            client, "get", f"/work/{slug}/?worker={worker}", secure=True
        )
        assert response.status_code == 200, response.status_code
        record("entry", statements)
        token = client.cookies["csrftoken"].value
        response, statements = _counted(
            client,
            "post",
            f"/work/{slug}/consent",
            data={"csrfmiddlewaretoken": token},
            **secure,
        )
        assert response.status_code == 302, response.status_code
        record("consent", statements)
        response, statements = _counted(client, "get", f"/work/{slug}/task", secure=True)
        assert response.status_code == 200, response.status_code
        record("task", statements)
        for _ in range(10):
            csrf = {"X-CSRFToken": client.cookies["csrftoken"].value, **secure["headers"]}
            response, statements = _counted(
                client,
                "post",
                f"/api/v1/work/{slug}/next",
                data="{}",
                content_type="application/json",
                secure=True,
                headers=csrf,
            )
            assert response.status_code == 200, (response.status_code, response.content[:200])
            record("next", statements)
            next_bytes.append(len(response.content))
            assignment = response.json()["assignment"]
            response, statements = _counted(
                client,
                "post",
                f"/api/v1/assignments/{assignment}/label",
                data=json.dumps({"value": 3, "duration_ms": 4000}),
                content_type="application/json",
                secure=True,
                headers=csrf,
            )
            assert response.status_code == 201, (response.status_code, response.content[:200])
            record("label", statements)

    ceiling = _ceiling_counts(host)
    summary = {}
    for kind, counts in per_kind.items():
        sql_only = per_kind_sql[kind]
        summary[kind] = {
            "requests": len(counts),
            # every statement Django sent, BEGIN/COMMIT/SAVEPOINT included
            "mean": round(statistics.fmean(counts), 2) if counts else None,
            "min": min(counts, default=None),
            "max": max(counts, default=None),
            # the same without transaction control
            "mean_sql": round(statistics.fmean(sql_only), 2) if sql_only else None,
            "sample_statements": samples.get(kind, []),
        }
    return {
        "platform": summary,
        "ceiling": ceiling,
        "next_response_bytes": {
            "platform": round(statistics.fmean(next_bytes)) if next_bytes else None,
            "ceiling": ceiling.pop("next_bytes"),
        },
        "method": "django CaptureQueriesContext",
    }


def _ceiling_counts(host: dict) -> dict:
    """The ceiling's two requests, in the same process with its URLconf: expected 0."""
    from django.test import Client
    from django.test.utils import override_settings

    with override_settings(ROOT_URLCONF="bench.crowd.ceiling"):
        client = Client(enforce_csrf_checks=True, **host)
        client.get("/ceiling/entry", secure=True)
        headers = {"X-CSRFToken": client.cookies["csrftoken"].value, "Origin": "https://127.0.0.1"}
        response, next_sql = _counted(
            client, "post", "/ceiling/next", data="{}", content_type="application/json",
            secure=True, headers=headers,
        )  # fmt: skip
        assert response.status_code == 200, response.status_code
        next_bytes = len(response.content)
        assignment = response.json()["assignment"]
        response, label_sql = _counted(
            client, "post", f"/ceiling/assignments/{assignment}/label",
            data='{"value": 3, "duration_ms": 1}', content_type="application/json",
            secure=True, headers=headers,
        )  # fmt: skip
        assert response.status_code == 201, response.status_code
    return {"next": len(next_sql), "label": len(label_sql), "next_bytes": next_bytes}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("slug")
    parser.add_argument("--cycles", type=int, default=20)
    args = parser.parse_args()
    if str(REPO) not in sys.path:
        sys.path.append(str(REPO))  # bench.crowd; the application comes first (cwd)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "bench.crowd.platform_settings")
    print(json.dumps(measure(args.slug, args.cycles)))


if __name__ == "__main__":
    main()
