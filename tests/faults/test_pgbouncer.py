"""The platform through PgBouncer in transaction mode (docker-compose.yml's "pgbouncer"
profile; README, Deployment): the crowd keeps every guarantee and an export streams
while it works.

In transaction mode a server connection passes to another client between transactions,
so nothing session-level may be used on it: with ``DATABASE_TRANSACTION_POOLING=1`` the
hot statements are not prepared (PgBouncer before 1.21 would lose them: "prepared
statement does not exist"), Django's server-side cursors are off, and the long export's
COPY, which holds a connection while it streams, goes to ``DATABASE_DIRECT_URL`` on a
connection of its own. Debian 12's PgBouncer (1.18) in
front of the fault stack's PostgreSQL, with two gunicorn processes behind it. (The compose
profile's PgBouncer, Debian 13's 1.24, carries prepared statements, and docker-compose.yml
keeps them on: that route is run by bench/compose_web.py, which checks the same guarantees.)
"""

import csv
import io
import time

import pytest

from bench.crowd.web_tier import Bouncer
from tests.faults import stack
from tests.faults.test_outages import N_ITEMS, PER_ITEM, _play, _researcher_token

pytestmark = pytest.mark.slow

# PgBouncer in transaction mode, run as the ``postgres`` user from a folder of its own (the
# crowd benchmark's, bench/crowd/web_tier.py), with fewer server connections than the two
# web processes hold: they must share them
SERVER_CONNECTIONS = 3


class PooledStack:
    """What ``_play`` needs of a stack: where the crowd goes, and logs for failures."""

    def __init__(self, url: str, web: stack.Process, bouncer: Bouncer):
        self.url, self.web, self.bouncer = url, web, bouncer

    def logs(self) -> str:
        return (
            f"--- {self.web.log_path.name}\n{self.web.log_text()[-3000:]}\n"
            f"--- pgbouncer.log\n{self.bouncer.log_text()[-2000:]}"
        )


@pytest.fixture
def pooled_web(stack_db, tmp_path):
    if not Bouncer.available():
        pytest.skip("needs pgbouncer (.ci/run installs it)")
    fault_stack = stack_db
    direct_url = fault_stack.database_url
    bouncer = Bouncer("127.0.0.1", fault_stack.postgres.port, SERVER_CONNECTIONS).start()
    environment = {
        **fault_stack.environment,
        "DATABASE_URL": f"postgres://postgres@127.0.0.1:{bouncer.port}/app",
        "DATABASE_TRANSACTION_POOLING": "1",
        "DATABASE_DIRECT_URL": direct_url,
    }
    web, port = stack.gunicorn(environment, tmp_path / "gunicorn-pooled.log", workers=2)
    try:
        yield PooledStack(f"http://127.0.0.1:{port}", web, bouncer), port
    finally:
        web.stop()
        bouncer.stop()


def test_the_crowd_and_an_export_through_pgbouncer_in_transaction_mode(pooled_web, tmp_path):
    pooled, port = pooled_web
    token = {"Authorization": f"Token {_researcher_token()}"}

    def export_mid_crowd():
        status, headers, body = stack.http_get(
            port, "/api/v1/batches/fault-bouncer/export?format=csv", timeout=60, headers=token
        )
        return status, headers, body

    crowd = _play(pooled, tmp_path, "fault-bouncer", export_mid_crowd)
    [(status, headers, body)] = crowd.observed
    assert status == 200, body[:500]
    rows = list(csv.DictReader(io.StringIO(body.decode("utf-8"))))
    assert rows and {"item_id", "value", "status"} <= set(rows[0])
    assert crowd.check_guarantees()["counted"] == N_ITEMS * PER_ITEM
    # nothing session-level was lost on the way: no such error in the web log
    time.sleep(0.2)
    log = pooled.web.log_text()
    assert "prepared statement" not in log and "cursor" not in log.lower(), log[-3000:]
    assert pooled.web.alive()
