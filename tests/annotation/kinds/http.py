"""The real HTTP paths the kind tests go through: a worker's entry, lease and answer (the
crowdworker JSON API with its CSRF header), and a staff client's exports."""

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
from django.test import Client

from tests import staff


def staff_client(name: str = "st-admin") -> Client:
    return staff.staff_client("admin", name)


def enter(batch, worker: str) -> Client:
    client = Client(enforce_csrf_checks=True)
    assert client.get(f"/work/{batch.slug}/", {"worker": worker}).status_code == 200
    client.post(
        f"/work/{batch.slug}/consent", {"csrfmiddlewaretoken": client.cookies["csrftoken"].value}
    )
    return client


def post_json(client: Client, url: str, body: dict):
    return client.post(
        url,
        data=json.dumps(body),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )


def lease(client: Client, batch) -> dict:
    body = post_json(client, f"/api/v1/work/{batch.slug}/next", {}).json()
    assert body["assignment"], body
    return body


def answer(client: Client, assignment: str, value):
    return post_json(client, f"/api/v1/assignments/{assignment}/label", {"value": value})


def answer_as(batch, worker: str, value) -> dict:
    """A new worker leases an item and answers it; returns the lease."""
    client = enter(batch, worker)
    body = lease(client, batch)
    response = answer(client, body["assignment"], value)
    assert response.status_code == 201, response.content
    return body


def export(client: Client, batch, layout: str, fmt: str) -> bytes:
    response = client.get(f"/api/v1/batches/{batch.slug}/export", {"layout": layout, "format": fmt})
    assert response.status_code == 200, response.content
    return b"".join(response.streaming_content)


def parquet_export(client: Client, batch, layout: str) -> pa.Table:
    return pq.read_table(io.BytesIO(export(client, batch, layout, "parquet")))


def column_types(table: pa.Table) -> dict[str, str]:
    return {field.name: str(field.type) for field in table.schema}


def jsonl(data: bytes) -> list[dict]:
    return [json.loads(line) for line in data.splitlines()]
