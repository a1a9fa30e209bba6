"""The install migration, run by `manage.py migrate` in subprocesses against scratch databases
(tests/scratch.py: each test's own database, dropped afterwards)."""

from __future__ import annotations

import psycopg
import pytest

from tests.scratch import fake_pgmq_extension

pytestmark = pytest.mark.slow


def has_pgmq_schema(conn: psycopg.Connection) -> bool:
    return conn.execute("SELECT to_regnamespace('pgmq') IS NOT NULL").fetchone()[0]


def applied(conn: psycopg.Connection) -> list[str]:
    """django_pgmq migrations recorded as applied."""
    if conn.execute("SELECT to_regclass('django_migrations')").fetchone()[0] is None:
        return []
    return [
        r[0]
        for r in conn.execute(
            "SELECT name FROM django_migrations WHERE app = 'django_pgmq' ORDER BY name"
        )
    ]


def check_round_trip(conn: psycopg.Connection) -> None:
    """The installed SQL API answers: a queue, a message, a read."""
    conn.execute("SELECT pgmq.create(queue_name => 'mig_check')")
    msg_id = conn.execute(
        "SELECT * FROM pgmq.send(queue_name => 'mig_check', msg => '{\"ok\": 1}')"
    ).fetchone()[0]
    got = conn.execute(
        "SELECT msg_id, message FROM pgmq.read(queue_name => 'mig_check', vt => 30, qty => 5)"
    ).fetchall()
    assert got == [(msg_id, {"ok": 1})]


def test_migrate_refuses_a_database_with_a_pgmq_schema(scratch):
    with scratch.connect() as conn:
        conn.execute("CREATE SCHEMA pgmq")
        conn.execute("CREATE TABLE pgmq.theirs (x int)")
        conn.execute("INSERT INTO pgmq.theirs VALUES (7)")
        result = scratch.manage("migrate", "django_pgmq")
        assert result.returncode != 0
        assert 'django-pgmq: schema "pgmq" already exists in this database' in result.stderr
        assert conn.execute("SELECT x FROM pgmq.theirs").fetchall() == [(7,)]
        assert conn.execute("SELECT to_regclass('pgmq.meta')").fetchone() == (None,)
        assert applied(conn) == []


def test_migrate_refuses_a_database_with_the_pgmq_extension(scratch):
    with scratch.connect() as conn:
        fake_pgmq_extension(conn)
        result = scratch.manage("migrate", "django_pgmq")
        assert result.returncode != 0
        assert "django-pgmq: this database already has the pgmq extension installed" in (
            result.stderr
        )
        assert "DROP EXTENSION pgmq" in result.stderr  # the hint says what to do
        assert not has_pgmq_schema(conn)
        assert applied(conn) == []


def test_migrate_zero_then_migrate_again(scratch):
    with scratch.connect() as conn:
        first = scratch.manage("migrate", "django_pgmq")
        assert first.returncode == 0, first.stderr
        installed = applied(conn)
        assert "0001_initial" in installed
        check_round_trip(conn)

        down = scratch.manage("migrate", "django_pgmq", "zero")
        assert down.returncode == 0, down.stderr
        assert applied(conn) == []
        assert not has_pgmq_schema(conn)
        assert conn.execute(
            "SELECT count(*) FROM pg_proc WHERE proname IN ('send', 'read', 'metrics') "
            "AND pronamespace::regnamespace::text = 'pgmq'"
        ).fetchone() == (0,)

        missing = scratch.python(
            "-c",
            "import django; django.setup(); import django_pgmq\n"
            "try:\n    django_pgmq.list_queues()\n"
            "except django_pgmq.FeatureNotAvailable as exc:\n    print(exc)",
        )
        assert "the pgmq SQL API is not installed in database 'default'" in missing.stdout
        assert "migrate django_pgmq" in missing.stdout

        again = scratch.manage("migrate", "django_pgmq")
        assert again.returncode == 0, again.stderr
        assert applied(conn) == installed
        check_round_trip(conn)


def test_0007_gives_older_queues_an_access_function_and_0012_takes_them_away(scratch):
    with scratch.connect() as conn:
        before = scratch.manage("migrate", "django_pgmq", "0006")
        assert before.returncode == 0, before.stderr
        conn.execute("SELECT pgmq.create('older')")
        conn.execute("SELECT pgmq.send('older', '{\"kept\": true}')")
        # A queue made by an install before 0007 had no access function.
        conn.execute('DROP FUNCTION pgmq."_ops_older"')

        after = scratch.manage("migrate", "django_pgmq", "0007")
        assert after.returncode == 0, after.stderr
        assert "0007_queue_ops" in applied(conn)
        assert conn.execute("SELECT to_regproc('pgmq._ops_older') IS NOT NULL").fetchone()[0]

        # 0012 drops every access function: queues start cold and get one when busy.
        head = scratch.manage("migrate", "django_pgmq")
        assert head.returncode == 0, head.stderr
        assert conn.execute("SELECT to_regproc('pgmq._ops_older') IS NULL").fetchone()[0]
        got = conn.execute("SELECT message FROM pgmq.read('older', 30, 5)").fetchall()
        assert got == [({"kept": True},)]
        check_round_trip(conn)
