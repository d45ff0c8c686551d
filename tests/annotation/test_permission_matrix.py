"""Every researcher/admin API endpoint and staff page against four callers.

Callers: anonymous, a crowdworker's browser session, a researcher, an admin (a token for
the API, a logged-in session for the pages); one expected status per cell. Crowdworkers
hold no staff permission, so they get what anonymous gets.
"""

import io
import json
import re

import pytest
from django.test import Client

from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from core.models import Job
from tests.factories import make_batch, make_participant
from tests.staff import logged_in, staff_user, with_token

pytestmark = pytest.mark.django_db

ANON, WORKER, RESEARCHER, ADMIN = "anonymous", "crowdworker", "researcher", "admin"


def _staff_clients(role: str) -> tuple[Client, Client]:
    """(token client for the API, logged-in browser session for the pages)."""
    user = staff_user(role)
    return with_token(user), logged_in(user)


@pytest.fixture
def setting():
    batch = make_batch(slug="matrix", n_items=2, per_item=2)
    person = make_participant(batch, "matrix-worker")
    outcome = lease_next_item(batch, person)
    submit_label(person.annotator, outcome.assignment.pk, 3, 10)
    worker = Client()
    worker.get("/work/matrix/", {"worker": "session-worker"})
    researcher_api, researcher_pages = _staff_clients(RESEARCHER)
    admin_api, admin_pages = _staff_clients(ADMIN)
    clients = {ANON: Client(), WORKER: worker, RESEARCHER: researcher_api, ADMIN: admin_api}
    page_clients = {
        ANON: Client(),
        WORKER: worker,
        RESEARCHER: researcher_pages,
        ADMIN: admin_pages,
    }
    job = Job.objects.create(kind="export", subject=batch, params={})
    return batch, person.annotator.pseudonym, clients, page_clients, job


def items_file():
    line = (
        b'{"item_id": "new-1", "query_id": "mq", "query": "Q?", "response_id": "mr",'
        b' "response": "R"}\n'
    )
    upload = io.BytesIO(line)
    upload.name = "items.jsonl"
    return upload


def scores_file(batch):
    response_id = batch.items.first().response.response_id
    row = {"source": "rm", "kind": "reward_model", "response_id": response_id, "score": 1}
    upload = io.BytesIO((json.dumps(row) + "\n").encode())
    upload.name = "scores.jsonl"
    return upload


# (method, path, body, expected status for anonymous, crowdworker, researcher, admin)
DENIED = 403
MATRIX = [
    ("get", "/api/v1/batches/", None, (DENIED, DENIED, 200, 200)),
    ("post", "/api/v1/batches/", {"slug": "made", "kind": "absolute", "title": "T"},
     (DENIED, DENIED, DENIED, 201)),
    ("get", "/api/v1/batches/matrix/", None, (DENIED, DENIED, 200, 200)),
    ("patch", "/api/v1/batches/matrix/", {"title": "Renamed"}, (DENIED, DENIED, DENIED, 200)),
    ("post", "/api/v1/batches/matrix/state", {"state": "paused"}, (DENIED, DENIED, DENIED, 200)),
    ("post", "/api/v1/batches/matrix/items", "FILE", (DENIED, DENIED, DENIED, 201)),
    ("post", "/api/v1/batches/matrix/import-jobs", "FILE", (DENIED, DENIED, DENIED, 202)),
    ("get", "/api/v1/batches/matrix/progress", None, (DENIED, DENIED, 200, 200)),
    ("get", "/api/v1/batches/matrix/annotators", None, (DENIED, DENIED, 200, 200)),
    ("get", "/api/v1/batches/matrix/history", None, (DENIED, DENIED, 200, 200)),
    ("post", "/api/v1/batches/matrix/annotators/PSEUDONYM/exclude", None,
     (DENIED, DENIED, DENIED, 200)),
    ("post", "/api/v1/batches/matrix/annotators/PSEUDONYM/include", None,
     (DENIED, DENIED, DENIED, 200)),
    ("get", "/api/schema/", None, (DENIED, DENIED, 200, 200)),
    ("get", "/api/docs/", None, (DENIED, DENIED, 200, 200)),
    ("get", "/api/v1/batches/matrix/export?layout=dense&format=csv", None,
     (DENIED, DENIED, 200, 200)),
    ("post", "/api/v1/batches/matrix/export-jobs", {"layout": "long", "format": "jsonl"},
     (DENIED, DENIED, 202, 202)),
    ("get", "/api/v1/jobs/JOB", None, (DENIED, DENIED, 200, 200)),
    ("get", "/api/v1/batches/matrix/score-sources", None, (DENIED, DENIED, 200, 200)),
    ("post", "/api/v1/scores", "SCORES", (DENIED, DENIED, 201, 201)),
    ("post", "/api/v1/batches/matrix/analyses", {"bootstrap": 10}, (DENIED, DENIED, 202, 202)),
    ("get", "/api/v1/batches/matrix/report", None, (DENIED, DENIED, 404, 404)),
]  # fmt: skip

LOGIN = 302  # pages send anonymous visitors (and crowdworkers: no login) to the login page
PAGES = [
    ("get", "/manage/", (LOGIN, LOGIN, 200, 200)),
    ("get", "/manage/new", (LOGIN, LOGIN, DENIED, 200)),
    ("get", "/manage/matrix/", (LOGIN, LOGIN, 200, 200)),
    ("get", "/manage/matrix/edit", (LOGIN, LOGIN, DENIED, 200)),
    ("get", "/manage/matrix/preview", (LOGIN, LOGIN, 200, 200)),
    ("get", "/manage/matrix/annotators", (LOGIN, LOGIN, 200, 200)),
    ("get", "/manage/matrix/history", (LOGIN, LOGIN, 200, 200)),
    ("post", "/manage/matrix/state", (LOGIN, LOGIN, DENIED, 302)),
    ("post", "/manage/matrix/items", (LOGIN, LOGIN, DENIED, 400)),
    ("post", "/manage/matrix/annotators/PSEUDONYM/exclude", (LOGIN, LOGIN, DENIED, 302)),
    ("post", "/manage/matrix/scores", (LOGIN, LOGIN, 400, 400)),
    ("get", "/manage/matrix/report", (LOGIN, LOGIN, 200, 200)),
    ("get", "/manage/matrix/report.json", (LOGIN, LOGIN, 404, 404)),
    ("get", "/admin/", (LOGIN, LOGIN, 200, 200)),
]


@pytest.mark.parametrize("method, path, body, expected", MATRIX, ids=[m[1] + m[0] for m in MATRIX])
def test_permission_matrix(setting, method, path, body, expected):
    batch, pseudonym, clients, _, job = setting
    path = path.replace("PSEUDONYM", pseudonym).replace("JOB", str(job.pk))
    for caller, status in zip((ANON, WORKER, RESEARCHER, ADMIN), expected, strict=True):
        client = clients[caller]
        if body == "FILE":
            response = client.post(path, {"file": items_file()})
        elif body == "SCORES":
            response = client.post(path, {"file": scores_file(batch)})
        elif method == "get":
            response = client.get(path)
        else:
            response = getattr(client, method)(
                path, data=body or {}, content_type="application/json"
            )
        assert response.status_code == status, (caller, path, response.content[:300])


@pytest.mark.parametrize("method, path, expected", PAGES, ids=[p[1] + p[0] for p in PAGES])
def test_page_permission_matrix(setting, method, path, expected):
    _, pseudonym, _, clients, _ = setting
    path = path.replace("PSEUDONYM", pseudonym)
    for caller, status in zip((ANON, WORKER, RESEARCHER, ADMIN), expected, strict=True):
        response = getattr(clients[caller], method)(path)
        assert response.status_code == status, (caller, path, response.content[:300])
        if status == LOGIN and caller in (ANON, WORKER):
            assert "login" in response["Location"]


def test_researcher_does_not_see_platform_ids(setting):
    _, _, clients, _, _ = setting
    rows = clients[RESEARCHER].get("/api/v1/batches/matrix/annotators").json()
    assert rows and all("platform_id" not in row for row in rows)
    admin_rows = clients[ADMIN].get("/api/v1/batches/matrix/annotators").json()
    assert {row["platform_id"] for row in admin_rows} >= {"matrix-worker"}


def test_upload_rejection_lists_file_line_field(setting):
    _, _, clients, _, _ = setting
    upload = io.BytesIO(b'{"item_id": "x", "query_id": "q"}\nnot json\n')
    upload.name = "bad.jsonl"
    response = clients[ADMIN].post("/api/v1/batches/matrix/items", {"file": upload})
    assert response.status_code == 400
    problems = response.json()["problems"]
    assert any(problem.startswith("bad.jsonl:1: query:") for problem in problems)
    assert any(problem.startswith("bad.jsonl:2:") for problem in problems)


def test_n_below_what_items_hold_is_a_409(setting):
    _, _, clients, _, _ = setting
    response = clients[ADMIN].patch(
        "/api/v1/batches/matrix/", data={"annotations_per_item": 0}, content_type="application/json"
    )
    assert response.status_code == 400
    response = clients[ADMIN].patch(
        "/api/v1/batches/matrix/", data={"annotations_per_item": 1}, content_type="application/json"
    )
    assert response.status_code == 200  # an item holds 1: N = 1 is allowed


def test_api_docs_load_their_assets_from_this_server(setting):
    _, _, _, pages, _ = setting
    page = pages[ADMIN].get("/api/docs/").content.decode()
    assets = re.findall(r'(?:src|href)="([^"]+)"', page)
    # the start-up script comes from the docs view itself (no inline script: CSP)
    local = ("/static/", "/api/docs/?script")
    assert assets and all(asset.startswith(local) for asset in assets), assets


def test_openapi_schema_generates_without_warnings():
    from drf_spectacular.drainage import GENERATOR_STATS
    from drf_spectacular.generators import SchemaGenerator

    GENERATOR_STATS.reset()
    schema = SchemaGenerator().get_schema(request=None, public=True)
    assert "/api/v1/work/{slug}/next" in schema["paths"]
    assert not GENERATOR_STATS  # true when any warning or error was emitted


# --------------------------------------------------------------------------- API docs


# The study types' APIs (census, genie, lengths, … : core.jobs.study_types) document
# themselves under their own tags; these are the platform's.
def _other_apps_api() -> tuple[str, ...]:
    """The API of every study type with a tag of its own (the platform's TAGS name only the
    corpora among them)."""
    from django.conf import settings

    from core.jobs.study_types import study_types

    declared = {tag["name"] for tag in settings.SPECTACULAR_SETTINGS["TAGS"]}
    return tuple(f"/api/v1/{study.slug}/" for study in study_types() if study.tag not in declared)


def test_the_study_types_apis_are_told_apart():
    other = set(_other_apps_api())
    assert {"/api/v1/census/", "/api/v1/genie/", "/api/v1/lengths/"} <= other
    assert "/api/v1/corpora/" not in other


def _platform_operations():
    from django.conf import settings
    from drf_spectacular.generators import SchemaGenerator

    other_apps_api = _other_apps_api()
    schema = SchemaGenerator().get_schema(request=None, public=True)
    declared = {tag["name"] for tag in settings.SPECTACULAR_SETTINGS["TAGS"]}
    operations = [
        (f"{method.upper()} {path}", operation)
        for path, methods in schema["paths"].items()
        if not path.startswith(other_apps_api)
        for method, operation in methods.items()
    ]
    return schema, declared, operations


def test_every_operation_has_a_declared_tag_a_summary_and_a_description():
    _, declared, operations = _platform_operations()
    assert len(operations) >= 20
    for name, operation in operations:
        assert operation.get("tags") and set(operation["tags"]) <= declared, name
        assert operation.get("summary"), name
        assert len(operation.get("description") or "") > 40, name
    tags_used = {tag for _, operation in operations for tag in operation["tags"]}
    assert tags_used == declared  # every declared tag has its operations


def _resolve(schema: dict, node: dict) -> dict:
    while "$ref" in node:
        node = schema["components"]["schemas"][node["$ref"].rsplit("/", 1)[-1]]
    return node


def test_json_answers_have_real_schemas_not_free_form_objects():
    """A 2xx JSON answer names its fields (no bare object shown as ``additionalProp1``)."""
    schema, _, operations = _platform_operations()
    for name, operation in operations:
        for code, response in operation["responses"].items():
            body = (response.get("content") or {}).get("application/json")
            if not code.startswith("2") or body is None:
                continue
            shape = _resolve(schema, body["schema"])
            if shape.get("type") == "array":
                shape = _resolve(schema, shape["items"])
            if isinstance(shape.get("additionalProperties"), dict) and not shape.get("properties"):
                shape = _resolve(schema, shape["additionalProperties"])  # a map of named shapes
            assert shape.get("properties"), f"{name} {code}: {shape}"


def test_key_operations_show_examples():
    schema, _, _ = _platform_operations()
    paths = schema["paths"]
    upload = paths["/api/v1/batches/{slug}/items"]["post"]["responses"]
    assert upload["201"]["content"]["application/json"]["examples"]
    assert upload["400"]["content"]["application/json"]["examples"]
    for path in ("/api/v1/batches/{slug}/progress", "/api/v1/jobs/{job_id}"):
        assert paths[path]["get"]["responses"]["200"]["content"]["application/json"]["examples"]
    progress = _resolve(
        schema,
        paths["/api/v1/batches/{slug}/progress"]["get"]["responses"]["200"]["content"][
            "application/json"
        ]["schema"],
    )
    assert {"leases", "labels_held", "projected_finish_at", "projection_note"} <= set(
        progress["properties"]
    )
