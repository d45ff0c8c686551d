"""The crowdworker hot path's SQL statements, pinned so that they cannot creep back.

A cycle is ``next`` (lease an item) then ``label`` (submit it). On PostgreSQL the common
case takes one statement each for the lease and for the label (``slots.lease_in_one_statement``,
``slots.count_label_in_one_statement``); on SQLite the locked path runs. The counts below
include the session read (the database session engine of the tests; with Redis the cached
session engine reads none), the savepoints of the test's own transaction, and nothing
else: every further query is a regression to explain (bench/crowd measures the cost).
"""

import json

import pytest
from django.db import connection
from django.test import Client

from annotation import selectors
from annotation.models import Assignment, Label
from tests.factories import make_batch

pytestmark = pytest.mark.django_db

# (PostgreSQL, SQLite): statements of one request, all included
NEXT_MAX = {"postgresql": 6, "sqlite": 12}
# PostgreSQL: the session read and one statement, the batch taken from the process's copy
# (``known_batches``; the request for work before read it). SQLite's locked path counts the
# participant's regular labels up on their row (one statement) so that no request for work
# counts label rows
LABEL_MAX = {"postgresql": 2, "sqlite": 9}
# PostgreSQL: the session read, the state-and-lease statement (in a savepoint inside the
# test's transaction: three), which finds the lease held, and that lease
REPEATED_NEXT_MAX = {"postgresql": 5, "sqlite": 4}


def _most(limits: dict) -> int:
    return limits["postgresql" if connection.vendor == "postgresql" else "sqlite"]


def _enter(batch, worker: str) -> Client:
    client = Client(enforce_csrf_checks=True)
    assert client.get(f"/work/{batch.slug}/", {"worker": worker}).status_code == 200
    client.post(
        f"/work/{batch.slug}/consent",
        {"csrfmiddlewaretoken": client.cookies["csrftoken"].value},
    )
    return client


def _post(client: Client, url: str, body: dict | None = None):
    return client.post(
        url,
        data=json.dumps(body or {}),
        content_type="application/json",
        HTTP_X_CSRFTOKEN=client.cookies["csrftoken"].value,
    )


def test_next_and_label_take_a_handful_of_statements(django_assert_max_num_queries):
    batch = make_batch(n_items=6, per_item=3)
    client = _enter(batch, "hot-path")
    selectors.regular_item_count(batch)  # the progress bar's count, kept per process
    for _ in range(3):
        with django_assert_max_num_queries(_most(NEXT_MAX)):
            lease = _post(client, f"/api/v1/work/{batch.slug}/next").json()
        assert lease["assignment"] and lease["progress"]["total_items"] == 6
        with django_assert_max_num_queries(_most(LABEL_MAX)):
            answer = _post(
                client,
                f"/api/v1/assignments/{lease['assignment']}/label",
                {"value": 4, "duration_ms": 2000},
            )
        assert answer.status_code == 201 and answer.json() == {"status": "counted"}
    labels = Label.objects.filter(batch=batch)
    assert labels.count() == 3 and set(labels.values_list("status", flat=True)) == {"counted"}
    assert not Assignment.objects.filter(batch=batch, state="open").exists()


def test_asking_again_for_the_held_lease_reads_only(django_assert_max_num_queries):
    batch = make_batch(n_items=2, per_item=2)
    client = _enter(batch, "reload")
    selectors.regular_item_count(batch)
    first = _post(client, f"/api/v1/work/{batch.slug}/next").json()
    with django_assert_max_num_queries(_most(REPEATED_NEXT_MAX)):
        again = _post(client, f"/api/v1/work/{batch.slug}/next").json()
    assert again["assignment"] == first["assignment"]


def test_a_batch_without_policies_costs_no_policy_query(django_assert_max_num_queries):
    """The label of a batch with attention-check exclusion reads the annotator's checks;
    one without pays nothing for it (the limits above hold with no policy)."""
    batch = make_batch(n_items=2, per_item=2, exclude_after_failed_checks=2)
    client = _enter(batch, "policies")
    lease = _post(client, f"/api/v1/work/{batch.slug}/next").json()
    with django_assert_max_num_queries(_most(LABEL_MAX) + 2):
        answer = _post(client, f"/api/v1/assignments/{lease['assignment']}/label", {"value": 2})
    assert answer.status_code == 201


def _prepared_statements() -> list[str]:
    with connection.cursor() as cursor:
        cursor.execute("SELECT statement FROM pg_prepared_statements")
        return [row[0] for row in cursor.fetchall()]


@pytest.mark.parametrize("prepared", [True, False])
def test_the_hot_statements_run_prepared_on_postgresql(prepared, settings):
    """The lease, the work state and the label run as prepared statements (parsed and
    planned once per connection), and Django's query log still shows their text; with
    ``DATABASE_PREPARED_STATEMENTS`` off (behind an older PgBouncer) nothing is prepared."""
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")
    settings.DATABASE_PREPARED_STATEMENTS = prepared
    batch = make_batch(n_items=4, per_item=2)
    client = _enter(batch, f"prepared-{prepared}")
    with connection.cursor() as cursor:
        cursor.execute("DEALLOCATE ALL")
    from django.test.utils import CaptureQueriesContext

    with CaptureQueriesContext(connection) as captured:
        for _ in range(2):
            lease = _post(client, f"/api/v1/work/{batch.slug}/next").json()
            answer = _post(client, f"/api/v1/assignments/{lease['assignment']}/label", {"value": 2})
            assert answer.status_code == 201, answer.content
    assert all(query["sql"] for query in captured.captured_queries)
    statements = _prepared_statements()
    # the first request for work reads the batch (the state), then leases; the batch
    # known, every later one is the state and the lease in one statement, and every label
    # one statement guarded by the batch row's version; an item shown for the first time
    # in the process is loaded by one more
    kinds = {
        "state": [s for s in statements if '_participation" p JOIN' in s and "leased" not in s],
        "lease": [s for s in statements if "leased AS (" in s and "state AS (" not in s],
        "state and lease": [s for s in statements if "state AS (" in s and "leased AS (" in s],
        "label": [s for s in statements if "submitted AS (" in s and "xmin" in s],
        "item shown": [s for s in statements if 'LEFT JOIN "annotation_response"' in s],
    }
    if prepared:
        assert {kind: len(found) for kind, found in kinds.items()} == dict.fromkeys(kinds, 1), (
            statements
        )
        assert len(statements) == len(kinds), statements
    else:
        assert not statements


def test_preparing_leaves_every_other_statement_alone_on_postgresql(settings):
    """Preparing is on for the connection only while a hot statement runs: with it left
    on, psycopg counts every other statement under its whole text, and a client-side
    bound import's INSERTs (their texts inlined) stayed in memory for the connection's
    life — 10 MB of response texts held on after a 10,000-item import."""
    if connection.vendor != "postgresql":
        pytest.skip("prepared statements are PostgreSQL's")
    settings.DATABASE_PREPARED_STATEMENTS = True
    batch = make_batch(n_items=2, per_item=2)
    client = _enter(batch, "prepares")
    lease = _post(client, f"/api/v1/work/{batch.slug}/next").json()
    assert _post(client, f"/api/v1/assignments/{lease['assignment']}/label", {"value": 2})
    assert any("leased AS (" in s for s in _prepared_statements())
    raw = connection.connection
    assert raw.prepare_threshold is None
    marker = "x" * 100_000
    for _ in range(3):
        assert not Label.objects.filter(comment=marker).exists()
    counted = raw._prepared._counts  # psycopg's statement counts, keyed by the text
    assert not any(marker.encode() in key[0] for key in counted), "a statement was kept"
    # the hot statements still run prepared afterwards
    lease = _post(client, f"/api/v1/work/{batch.slug}/next").json()
    assert lease["assignment"], lease


ENTRY_MAX = 6  # statements, transaction control (BEGIN, COMMIT, savepoints) aside


def _statements(captured) -> list[str]:
    control = ("BEGIN", "COMMIT", "ROLLBACK", "SAVEPOINT", "RELEASE")
    return [q["sql"] for q in captured if not q["sql"].lstrip().upper().startswith(control)]


def test_the_entry_page_takes_a_handful_of_statements():
    """A newcomer's study link (identify, decide, join, session) and a returning
    participant's, each in at most ``ENTRY_MAX`` statements: a study's launch brings
    hundreds of newcomers a minute."""
    from django.test.utils import CaptureQueriesContext

    batch = make_batch(n_items=4, per_item=2, consent_text="I agree.")
    client = Client(enforce_csrf_checks=True)
    with CaptureQueriesContext(connection) as captured:
        page = client.get(f"/work/{batch.slug}/", {"worker": "newcomer"})
    assert page.status_code == 200 and b"I agree." in page.content
    assert len(_statements(captured)) <= ENTRY_MAX, _statements(captured)
    with CaptureQueriesContext(connection) as captured:
        again = client.get(f"/work/{batch.slug}/", {"worker": "newcomer"})
    assert again.status_code == 200 and b"I agree." in again.content
    assert len(_statements(captured)) <= ENTRY_MAX, _statements(captured)
