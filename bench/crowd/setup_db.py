"""The benchmark's own PostgreSQL database and its live batch.

Everything goes through the project's own entry points, as an operator would:
``manage.py migrate``, ``manage.py create_batch``, ``manage.py import_items`` with a
generated JSONL file (docs/FORMATS.md, "Items"), and the ``change_state`` service through
``manage.py shell -c`` to publish (there is no state command). ``collectstatic`` fills a
temporary ``STATIC_ROOT`` (see ``platform_settings.py``).
"""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import psycopg

REPO = Path(__file__).resolve().parents[2]  # this checkout: the benchmark, its results
# the application under test: this checkout, or an export of a commit (``--commit``)
CODE = {"dir": REPO}


def code_dir() -> Path:
    return CODE["dir"]


def export_commit(rev: str, into: Path) -> str:
    """``git archive REV`` unpacked into ``into`` (the work tree is not touched); the
    full commit id."""
    commit = subprocess.run(
        ["git", "rev-parse", "--verify", f"{rev}^{{commit}}"],
        cwd=REPO,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.Popen(["git", "archive", commit], cwd=REPO, stdout=subprocess.PIPE)
    subprocess.run(["tar", "-x", "-C", str(into)], stdin=archive.stdout, check=True)
    archive.stdout.close()
    if archive.wait() != 0:
        raise RuntimeError(f"git archive {commit} failed")
    CODE["dir"] = into
    return commit


PLATFORM_SETTINGS = "bench.crowd.platform_settings"

WORDS = (
    "model answer question reason because therefore example data value result step "
    "first second finally however clearly simple complex language rating quality "
    "response user context detail summary evidence claim source method test"
).split()


@dataclass
class Database:
    """Where the benchmark's database lives (``server_url`` has no database name)."""

    server_url: str
    name: str

    @property
    def url(self) -> str:
        return f"{self.server_url}/{self.name}"

    @property
    def admin_url(self) -> str:
        return f"{self.server_url}/postgres"

    def connect(self, **kwargs) -> psycopg.Connection:
        return psycopg.connect(self.url, autocommit=True, **kwargs)


def recreate_database(db: Database) -> None:
    with psycopg.connect(db.admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db.name}" WITH (FORCE)')
        conn.execute(f'CREATE DATABASE "{db.name}"')


def drop_database(db: Database) -> None:
    with psycopg.connect(db.admin_url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{db.name}" WITH (FORCE)')


def django_env(db: Database, static_root: Path, extra: dict[str, str] | None = None) -> dict:
    """The environment of the platform (commands and gunicorn alike)."""
    env = dict(os.environ)
    env.update(
        {
            "DJANGO_SETTINGS_MODULE": PLATFORM_SETTINGS,
            "DATABASE_URL": db.url,
            "DEBUG": "0",
            "SECRET_KEY": "bench-crowd-not-a-secret-0123456789abcdefghijklmnopqrstuvwxyz",
            "ALLOWED_HOSTS": "127.0.0.1,localhost",
            "BENCH_STATIC_ROOT": str(static_root),
            "LOG_LEVEL": "WARNING",
            # the application first; this checkout for bench.crowd (``bench`` is a
            # namespace package, so both folders' bench/ are searched)
            "PYTHONPATH": os.pathsep.join(dict.fromkeys([str(code_dir()), str(REPO)])),
        }
    )
    env.pop("REDIS_URL", None)
    env.update(extra or {})
    return env


def manage(env: dict, *args: str) -> str:
    """Run ``manage.py ARGS`` with ``env``; returns stdout, raises with stderr on failure."""
    done = subprocess.run(
        [sys.executable, str(code_dir() / "manage.py"), *args],
        cwd=code_dir(),
        env=env,
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {' '.join(args)} failed:\n{done.stderr[-3000:]}")
    return done.stdout


def write_items(path: Path, prefix: str, start: int, count: int, seed: int = 0) -> None:
    """JSONL items of an absolute batch: a prompt shared by 5 responses, ~1 kB of Markdown."""
    rng = random.Random(seed + start)
    with path.open("w", encoding="utf-8") as out:
        for i in range(start, start + count):
            q = i // 5
            # the same query id must always carry the same text
            words = [WORDS[(q * 7 + k * 13) % len(WORDS)] for k in range(20)]
            paragraphs = [
                " ".join(rng.choice(WORDS) for _ in range(45)).capitalize() + "." for _ in range(3)
            ]
            bullets = "\n".join(f"- **{rng.choice(WORDS)}**: {rng.choice(WORDS)}" for _ in range(4))
            row = {
                "item_id": f"{prefix}-i{i}",
                "query_id": f"{prefix}-q{q}",
                "query": f"Question {q}: " + " ".join(words) + "?",
                "category": "Benchmark",
                "response_id": f"{prefix}-r{i}",
                "model": f"model-{i % 3}",
                "response": "\n\n".join(paragraphs[:2]) + "\n\n" + bullets + "\n\n" + paragraphs[2],
            }
            out.write(json.dumps(row) + "\n")


@dataclass
class BenchBatch:
    slug: str
    per_item: int
    items: int


def prepare(
    db: Database,
    env: dict,
    static_root: Path,
    slug: str,
    items: int,
    per_item: int,
    log,
    *,
    past_participants: int = 0,
) -> BenchBatch:
    """Fresh database, migrated, static files collected, a live batch of ``items`` items,
    and ``past_participants`` people who entered it before the run."""
    log(f"creating database {db.name}")
    recreate_database(db)
    log("manage.py migrate")
    manage(env, "migrate", "--noinput", "-v0")
    log(f"manage.py collectstatic -> {static_root}")
    manage(env, "collectstatic", "--noinput", "-v0")
    log(f"manage.py create_batch {slug} --per-item {per_item}")
    manage(
        env,
        "create_batch",
        slug,
        "--kind",
        "absolute",
        "--per-item",
        str(per_item),
        "--title",
        "Crowd benchmark",
        "--lease-seconds",
        "600",
    )
    add_items(env, slug, 0, items, log)
    log(f"publishing {slug} (change_state -> live)")
    manage(
        env,
        "shell",
        "-c",
        "from annotation.models import Batch; "
        "from annotation.services.batches import change_state; "
        f"change_state(Batch.objects.get(slug={slug!r}), 'live')",
    )
    completed = add_past_participants(db, slug, past_participants, log)
    if completed:  # the run's own free slots as without them
        add_items(env, slug, items, completed, log)
    return BenchBatch(slug=slug, per_item=per_item, items=items + completed)


# each past participant's labels (a study's typical share: 2,000 people x 100 labels make
# 8,000 items x 25); they fill whole items, imported before the run's own
PAST_LABELS_EACH = 50


def add_past_participants(db: Database, slug: str, count: int, log) -> int:
    """``count`` annotators who took part in the batch before the run and are no longer
    at work, with ``PAST_LABELS_EACH`` counted labels each, on items they completed: a
    study with 60 people at work at once has had many more before them. Without them the
    people, participations, leases and labels tables start a page or two long, and
    PostgreSQL rightly reads them whole — its foreign-key checks too, with plans a
    connection keeps — figures of a batch's first minute, not of a study's life. The
    completed items are the batch's first (``position``); returns how many."""
    if count <= 0:
        return 0
    with db.connect() as conn:
        batch_id, n = conn.execute(
            "SELECT id, annotations_per_item FROM annotation_batch WHERE slug = %s", [slug]
        ).fetchone()
        done = count * PAST_LABELS_EACH // n
        log(f"adding {count} past participants, {done} items they completed")
        conn.execute(
            "INSERT INTO annotation_annotator (platform, platform_id, pseudonym, created_at) "
            "SELECT 'prolific', 'past-' || k, 'past-' || k, now() "
            "FROM generate_series(0, %s - 1) AS k",
            [count],
        )
        conn.execute(
            "INSERT INTO annotation_participation "
            "(batch_id, annotator_id, status, entry_params, first_seen_at, last_seen_at) "
            "SELECT %s, a.id, 'active', '{}'::jsonb, now(), now() "
            "FROM annotation_annotator a WHERE a.platform_id LIKE 'past-%%'",
            [batch_id],
        )
        # item r gets the N past participants r*N, r*N+1, ... (mod count): distinct
        # people per item, the same number of labels per person
        conn.execute(
            """
            INSERT INTO annotation_assignment (id, batch_id, item_id, annotator_id, state,
                purpose, shown_order, leased_at, expires_at, submitted_at)
            SELECT gen_random_uuid(), %(batch)s, i.id, a.id, 'submitted', 'regular', '',
                   now() - interval '1 day', now() - interval '1 day' + interval '10 minutes',
                   now() - interval '1 day'
            FROM (SELECT id, row_number() OVER (ORDER BY position) - 1 AS r
                  FROM annotation_item WHERE batch_id = %(batch)s AND NOT is_check
                  ORDER BY position LIMIT %(done)s) i
            CROSS JOIN generate_series(0, %(n)s - 1) AS j
            JOIN annotation_annotator a
              ON a.platform_id = 'past-' || ((i.r * %(n)s + j) %% %(people)s)
            """,
            {"batch": batch_id, "done": done, "n": n, "people": count},
        )
        conn.execute(
            """
            INSERT INTO annotation_label (assignment_id, batch_id, item_id, annotator_id,
                kind, value, status, shown_order, submitted_at, duration_ms)
            SELECT s.id, s.batch_id, s.item_id, s.annotator_id, 'absolute',
                   1 + (abs(hashtext(s.id::text)) %% 5), 'counted', '', s.submitted_at, 20000
            FROM annotation_assignment s WHERE s.batch_id = %s AND s.state = 'submitted'
            """,
            [batch_id],
        )
        conn.execute(
            "UPDATE annotation_item SET reserved_count = target, counted_count = target "
            "WHERE id IN (SELECT DISTINCT item_id FROM annotation_assignment "
            "WHERE batch_id = %s)",
            [batch_id],
        )
        conn.execute(
            "UPDATE annotation_participation p SET regular_labels = c.labels "
            "FROM (SELECT annotator_id, COUNT(*) AS labels FROM annotation_label "
            "WHERE batch_id = %s GROUP BY annotator_id) c "
            "WHERE p.annotator_id = c.annotator_id AND p.batch_id = %s",
            [batch_id, batch_id],
        )
    return done


def add_items(env: dict, slug: str, start: int, count: int, log) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "items.jsonl"
        write_items(path, slug, start, count)
        log(f"manage.py import_items {slug} ({count} items)")
        manage(env, "import_items", slug, str(path))


def free_slots(db: Database, slug: str) -> int:
    """Labels the batch can still take: sum over items of N - (counted + open leases)."""
    with db.connect() as conn:
        row = conn.execute(
            "SELECT COALESCE(SUM(i.target - i.reserved_count), 0), COUNT(*) "
            "FROM annotation_item i JOIN annotation_batch b ON b.id = i.batch_id "
            "WHERE b.slug = %s",
            [slug],
        ).fetchone()
    return int(row[0])


def ensure_capacity(db: Database, env: dict, batch: BenchBatch, needed: int, log) -> None:
    """Import more items when fewer than ``needed`` slots are left, so the batch never drains."""
    free = free_slots(db, batch.slug)
    if free >= needed:
        return
    more = max(batch.items // 2, -(-(needed - free) // batch.per_item) * 2)
    log(f"only {free} free slots left (< {needed}): importing {more} more items")
    add_items(env, batch.slug, batch.items, more, log)
    batch.items += more


def vacuum_analyze(db: Database) -> None:
    """What autovacuum would do between runs (it is off on some servers)."""
    with db.connect() as conn:
        conn.execute("VACUUM ANALYZE")
