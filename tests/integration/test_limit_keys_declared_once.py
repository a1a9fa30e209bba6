"""The limit keys are declared once: the attribute declaration's side ``limit``.

``pgmq._limit_keys()`` derives them from ``pgmq._queue_attribute_declaration()``, and every
place in the SQL that treats the limits alike (the change test of
``set_queue_attributes``, the claim filter, the statement builder, the limit state's sync)
asks it. A second list of them anywhere in ``django_pgmq/sql/`` fails here, and so does a
key declared a limit that keeps no limit state (or a key that keeps some and is not one).
"""

from __future__ import annotations

import json
import re
import uuid
from pathlib import Path

import psycopg
import pytest

from django_pgmq.attributes_declared import DECLARED

pytestmark = pytest.mark.usefixtures("django_db_setup")

SQL_DIR = Path(__file__).resolve().parents[2] / "django_pgmq" / "sql"
DECLARATION = re.compile(
    r"CREATE FUNCTION pgmq\._queue_attribute_declaration\(\).*?\$fn\$;", re.DOTALL
)
# A value for each declared key that the declaration accepts (a limit's state row
# follows from any valid value).
VALUES = {
    "seconds": 5,
    "bytes": 1000,
    "count": 3,
    "switch": True,
    "rate": {"count": 5, "seconds": 1},
}


def limit_keys(db: psycopg.Connection) -> list[str]:
    row = db.execute("SELECT pgmq._limit_keys()").fetchone()
    assert row is not None
    return list(row[0])


def test_the_limit_keys_are_the_declared_side_limit(db):
    declared = sorted(spec.key for spec in DECLARED if spec.side == "limit")
    assert limit_keys(db) == declared
    assert declared  # max_in_flight and rate_limit today


def test_no_sql_file_lists_the_limit_keys_again(db):
    keys = limit_keys(db)
    quoted = re.compile("|".join(re.escape(f"'{key}'") for key in keys))
    found = []
    for path in sorted(SQL_DIR.glob("*.sql")):
        text = DECLARATION.sub("", path.read_text())
        for number, statement in enumerate(text.split(";")):
            named = set(quoted.findall(statement))
            if len(named) > 1:
                found.append(f"{path.name}, statement {number}: {sorted(named)}")
    assert found == [], "ask pgmq._limit_keys() instead of listing the limit keys"


def test_each_limit_key_and_no_other_keeps_limit_state(db):
    keys = set(limit_keys(db))
    for spec in DECLARED:
        if spec.kind == "queue" or spec.key == "max_receive_count":
            continue  # set together (dead letters): no limit either way
        queue = f"lk_{uuid.uuid4().hex[:10]}"
        db.execute("SELECT pgmq.create(%s)", [queue])
        try:
            value = VALUES[spec.kind]
            db.execute(
                "SELECT pgmq.set_queue_attributes(%s, %s::jsonb)",
                [queue, json.dumps({spec.key: value})],
            )
            row = db.execute(
                "SELECT count(*) FROM pgmq.queue_limit_state WHERE queue_name = %s", [queue]
            ).fetchone()
            assert row == ((1,) if spec.key in keys else (0,)), spec.key
        finally:
            db.execute("SELECT pgmq.drop_queue(%s)", [queue])


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    return pg_connect()
