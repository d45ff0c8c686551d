"""Every researcher/admin API endpoint against four callers, one expected status per cell.

Callers: anonymous, a crowdworker's browser session, a researcher's token, an admin's
token. Crowdworkers hold no staff permission, so they get what anonymous gets.
"""

import io

import pytest
from django.contrib.auth.models import Group, User
from django.test import Client
from rest_framework.authtoken.models import Token

from annotation.services.labelling import submit_label
from annotation.services.leasing import lease_next_item
from tests.factories import make_batch, make_participant

pytestmark = pytest.mark.django_db

ANON, WORKER, RESEARCHER, ADMIN = "anonymous", "crowdworker", "researcher", "admin"


def _staff_client(role: str) -> Client:
    user = User.objects.create_user(f"{role}-user", password="pw", is_staff=True)
    user.groups.add(Group.objects.get(name=role))
    key = Token.objects.create(user=user).key
    return Client(HTTP_AUTHORIZATION=f"Token {key}")


@pytest.fixture
def setting():
    batch = make_batch(slug="matrix", n_items=2, per_item=2)
    person = make_participant(batch, "matrix-worker")
    outcome = lease_next_item(batch, person)
    submit_label(person.annotator, outcome.assignment.pk, 3, 10)
    worker = Client()
    worker.get("/work/matrix/", {"worker": "session-worker"})
    clients = {
        ANON: Client(),
        WORKER: worker,
        RESEARCHER: _staff_client(RESEARCHER),
        ADMIN: _staff_client(ADMIN),
    }
    return batch, person.annotator.pseudonym, clients


def items_file():
    line = (
        b'{"item_id": "new-1", "query_id": "mq", "query": "Q?", "response_id": "mr",'
        b' "response": "R"}\n'
    )
    upload = io.BytesIO(line)
    upload.name = "items.jsonl"
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
    ("get", "/api/v1/batches/matrix/progress", None, (DENIED, DENIED, 200, 200)),
    ("get", "/api/v1/batches/matrix/annotators", None, (DENIED, DENIED, 200, 200)),
    ("post", "/api/v1/batches/matrix/annotators/PSEUDONYM/exclude", None,
     (DENIED, DENIED, DENIED, 200)),
    ("post", "/api/v1/batches/matrix/annotators/PSEUDONYM/include", None,
     (DENIED, DENIED, DENIED, 200)),
    ("get", "/api/schema/", None, (DENIED, DENIED, 200, 200)),
]  # fmt: skip


@pytest.mark.parametrize("method, path, body, expected", MATRIX, ids=[m[1] + m[0] for m in MATRIX])
def test_permission_matrix(setting, method, path, body, expected):
    _, pseudonym, clients = setting
    path = path.replace("PSEUDONYM", pseudonym)
    for caller, status in zip((ANON, WORKER, RESEARCHER, ADMIN), expected, strict=True):
        client = clients[caller]
        if body == "FILE":
            response = client.post(path, {"file": items_file()})
        elif method == "get":
            response = client.get(path)
        else:
            response = getattr(client, method)(
                path, data=body or {}, content_type="application/json"
            )
        assert response.status_code == status, (caller, path, response.content[:300])


def test_researcher_does_not_see_platform_ids(setting):
    _, _, clients = setting
    rows = clients[RESEARCHER].get("/api/v1/batches/matrix/annotators").json()
    assert rows and all("platform_id" not in row for row in rows)
    admin_rows = clients[ADMIN].get("/api/v1/batches/matrix/annotators").json()
    assert {row["platform_id"] for row in admin_rows} >= {"matrix-worker"}


def test_upload_rejection_lists_file_line_field(setting):
    _, _, clients = setting
    upload = io.BytesIO(b'{"item_id": "x", "query_id": "q"}\nnot json\n')
    upload.name = "bad.jsonl"
    response = clients[ADMIN].post("/api/v1/batches/matrix/items", {"file": upload})
    assert response.status_code == 400
    problems = response.json()["problems"]
    assert any(problem.startswith("bad.jsonl:1: query:") for problem in problems)
    assert any(problem.startswith("bad.jsonl:2:") for problem in problems)


def test_n_below_what_items_hold_is_a_409(setting):
    _, _, clients = setting
    response = clients[ADMIN].patch(
        "/api/v1/batches/matrix/", data={"annotations_per_item": 0}, content_type="application/json"
    )
    assert response.status_code == 400
    response = clients[ADMIN].patch(
        "/api/v1/batches/matrix/", data={"annotations_per_item": 1}, content_type="application/json"
    )
    assert response.status_code == 200  # an item holds 1: N = 1 is allowed
