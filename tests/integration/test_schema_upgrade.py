"""Upgrades: an install of 0.1.0 upgraded by ``migrate`` equals a fresh install.

The released migrations are frozen (their SQL lives in migrations/sql/ and never
changes), the live SQL in django_pgmq/sql/ equals what the migrations produce, and a
database migrated to 0.1.0 (0007) with queues of every kind and their messages,
then migrated to the head, has the same pg_catalog signature as a fresh install
given the same queues, keeps every message, and every queue still works.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import psycopg
import pytest

from django_pgmq import index_builds
from django_pgmq.sqltools import migrate as sqlmigrate
from django_pgmq.sqltools import schema as sqlschema
from django_pgmq.sqltools import squash as sqlsquash
from django_pgmq.sqltools.squash import QUEUE_SETUP, QUEUES, contents
from tests.integration.test_migrations import applied, has_pgmq_schema
from tests.scratch import fake_pgmq_extension

pytestmark = pytest.mark.slow

FROZEN = Path(index_builds.__file__).parent / "migrations" / "sql"

# The SQL of 0.1.0 (a2b74f4) and 0.2.0. A failure here means a released migration was edited:
# undo that, and ship the change as a new migration (python -m django_pgmq.sqltools.migrate make).
RELEASED = {
    "0001_initial.sql": "3aa82e9e88bdff58534f4ad83ba6d1df97f1945011022720b0fbaeda7839bfda",
    "0002_worker.sql": "a220901bea658d054c311194bf1e446248339df578e09087e93eb3654ea51bf4",
    "0003_celery.sql": "fadfe38a27dd9833faf617ad956e1fd32846349afc0023d29726943d6d86c4e0",
    "0004_dashboard.sql": "fb4ee7036114da561b7bb5793c9e095e7b4c184520c8ec0429ed5a2132a6b983",
    "0005_spark.sql": "27261b488598d951d37a826360a0653f40aa4bd44b50219078bd5cd8adca92e3",
    "0006_dashboard_spark_stats.sql": (
        "b15e8f2b974c89a1435abd51f99785be7ab4236cf027b32a88fa846022f24cf2"
    ),
    "0007_queue_ops.sql": "93cc750cd6d79b1a53da8fee3382022327f291b010e0d6adda38830ef38ebea6",
    # 0.2.0 (the squash of the development migrations since 0.1.0)
    "0008_attributes_limits_schedules_tasks_workflows_and_roles_part1.sql": (
        "20e490c355b3a0ef5822c4ba4bf0f65c11723707c62ac6c3b6454b4cc9044593"
    ),
    "0008_attributes_limits_schedules_tasks_workflows_and_roles_part1_reverse.sql": (
        "7d01f4c2081136058cf0ee9b25715e6140eebf4b3a9c97bca4d3e4283f043f63"
    ),
    "0008_attributes_limits_schedules_tasks_workflows_and_roles_part2.sql": (
        "33fa54a6cda46d2ed2e4d0b31f4aaefeeaa79e7e40ed039ffb52769615b179d4"
    ),
    "0008_attributes_limits_schedules_tasks_workflows_and_roles_part2_reverse.sql": (
        "bd5f5133be8e8c1d4a0a46f9c98fc4c0b44a1af532dea752e821c5cdc37b032c"
    ),
    "0008_attributes_limits_schedules_tasks_workflows_and_roles_part3.sql": (
        "a15794ffba6ef91fdc21d17a3189d4c6393aa38b0d1e66655d766f6412edec1a"
    ),
    "0008_attributes_limits_schedules_tasks_workflows_and_roles_part3_reverse.sql": (
        "221f7b86d6b4eaa4bcbcef20f16f093bc859f3b90692c056c9e4794ba0e03525"
    ),
    "0008_attributes_limits_schedules_tasks_workflows_and_roles_part4.sql": (
        "4ad46177b62f4bdb429e5cb075498d7a3aaa700b660a190e2d0a8e1d3a26e3b9"
    ),
    "0008_attributes_limits_schedules_tasks_workflows_and_roles_part4_reverse.sql": (
        "9c99f95ef137f9c37547d92b40e16714dff87881a4ec89398d380a178a013ed3"
    ),
    "0008_attributes_limits_schedules_tasks_workflows_and_roles_part5.sql": (
        "3ae618dbf34c1ad7c70a4f32f70ceb88a48e936b773f9afa6a734708484cf170"
    ),
    "0008_attributes_limits_schedules_tasks_workflows_and_roles_part5_reverse.sql": (
        "6bcfe2598f99074e6cf632e481f53a856233458c47b4e16ca06cccfb2c4d17fe"
    ),
    "0008_attributes_limits_schedules_tasks_workflows_and_roles_part6.sql": (
        "972a080dab4d6f21dac4c3b0020de2d6de002a3384e052a08d6a27ae432f5f85"
    ),
    "0008_attributes_limits_schedules_tasks_workflows_and_roles_part6_reverse.sql": (
        "174c9b867395d36e1cf3814f8c8a99fe5de68399936e987f774fea1777a193b9"
    ),
    "0008_attributes_limits_schedules_tasks_workflows_and_roles_part7.sql": (
        "adaaceefcb5e9be40191e986492b39e07d8b430a33a09112ef94d889c33e6aee"
    ),
    "0008_attributes_limits_schedules_tasks_workflows_and_roles_part7_reverse.sql": (
        "3a679c86ff25fdc9cf5fc1aedabbdea26ad7d77c6d5975d1bf0e7b748ef8e0bf"
    ),
}

# Queues of every kind (sqltools.squash's, which verifies a squash with them), made the
# same way in both databases, and this many messages sent to each.
SENT_PER_QUEUE = 12


def populate(conn: psycopg.Connection) -> None:
    """Queues of every kind with messages, some read, some archived, one dead-lettered.

    On an install from 0.2 to 0019 the session's third use of a queue promoted it to the
    hot path, which wrote a function pgmq._ops_<queue>: every queue here is hot there.
    """
    for statement in QUEUE_SETUP:
        conn.execute(statement)
    for queue in QUEUES:
        headers = {"x-group-id": "g1"} if queue == "fifo" else None
        for n in range(SENT_PER_QUEUE):
            conn.execute(
                "SELECT pgmq.send(queue_name => %s, msg => %s, headers => %s)",
                [queue, json.dumps({"queue": queue, "n": n}), json.dumps(headers)],
            )
        conn.execute("SELECT pgmq.read(queue_name => %s, vt => 0, qty => 3)", [queue])
        conn.execute("SELECT pgmq.archive(queue_name => %s, msg_id => 1)", [queue])
    conn.execute("SELECT pgmq.send_topic('orders.new', '{\"topic\": true}')")
    # The worker's dead-letter move: the message leaves 'plain' for a queue made for it.
    conn.execute("SELECT pgmq._dead_letter('plain', 2, 'plain_dlq', 'failed 5 times')")


def test_released_migrations_keep_the_sql_they_ran():
    for name, digest in RELEASED.items():
        actual = hashlib.sha256((FROZEN / name).read_bytes()).hexdigest()
        assert actual == digest, f"released migration SQL {name} was edited"


def test_no_migration_reads_the_live_sql_files():
    for path in sorted((FROZEN.parent).glob("[0-9][0-9][0-9][0-9]_*.py")):
        text = path.read_text(encoding="utf-8")
        assert "sqlfiles" not in text and "django_pgmq/sql" not in text, path.name


def test_the_live_sql_equals_what_the_migrations_produce(pg_dsn):
    differences = sqlmigrate.compare(pg_dsn)
    assert not differences, (
        "django_pgmq/sql/ differs from the schema the migrations produce; run "
        "python -m django_pgmq.sqltools.migrate make 'why':\n" + "\n".join(differences)
    )


def test_an_upgraded_0_1_0_install_equals_a_fresh_one(scratch, other_scratch):
    old, fresh = scratch, other_scratch
    with old.connect() as conn:
        done = old.manage("migrate", "django_pgmq", "0007")
        assert done.returncode == 0, done.stderr
        populate(conn)
        before = contents(conn)
        assert before["q_plain_dlq"] and before["a_parted"]

        done = old.manage("migrate")
        assert done.returncode == 0, done.stderr
        upgraded = sqlschema.signature(conn)
        assert contents(conn) == before  # every message kept, as it was

    with fresh.connect() as conn:
        done = fresh.manage("migrate")
        assert done.returncode == 0, done.stderr
        populate(conn)
        # create then create_fifo_index on an empty queue builds the index at once, as
        # 0.1.0 did: nothing is left for a worker or pgmq_maintain.
        assert index_builds.build_pending_dsn(fresh.dsn) == []
        installed = sqlschema.signature(conn)

    assert any(key.startswith("trigger") for key in installed)
    assert any(key.startswith("index pgmq.a_parted") for key in installed)
    assert sqlschema.differences(installed, upgraded) == []

    with old.connect() as conn:
        for queue in [*QUEUES, "plain_dlq"]:
            msg_id = conn.execute(
                "SELECT * FROM pgmq.send(queue_name => %s, msg => '{\"after\": 1}')", [queue]
            ).fetchone()[0]
            got = conn.execute(
                "SELECT msg_id FROM pgmq.read(queue_name => %s, vt => 30, qty => 100)", [queue]
            ).fetchall()
            assert (msg_id,) in got, queue


def test_the_signature_sees_a_changed_function_body(scratch):
    with scratch.connect() as conn:
        done = scratch.manage("migrate", "django_pgmq")
        assert done.returncode == 0, done.stderr
        before = sqlschema.signature(conn)
        conn.execute(
            "CREATE OR REPLACE FUNCTION pgmq._probe() RETURNS int LANGUAGE sql AS 'SELECT 1'"
        )
        body = conn.execute(
            "SELECT pg_get_functiondef('pgmq.metrics_all()'::regprocedure)"
        ).fetchone()[0]
        conn.execute(body.replace("AS $function$", "AS $function$ -- edited", 1))
        found = sqlschema.differences(before, sqlschema.signature(conn))
    assert [line.split("\n")[0] for line in found] == [
        "unexpected: function pgmq._probe()",
        "differs: function pgmq.metrics_all()",
    ]


def test_make_writes_sql_that_takes_the_migrated_schema_to_the_live_one(pg_dsn):
    changed = [
        *sqlmigrate.live_sql(),
        "CREATE OR REPLACE FUNCTION pgmq.metrics_all() RETURNS SETOF pgmq.metrics_result "
        "LANGUAGE sql AS $$ SELECT * FROM pgmq.metrics('nothing') $$;"
        "CREATE FUNCTION pgmq._new_helper(x int) RETURNS int LANGUAGE sql AS 'SELECT x';"
        "CREATE INDEX meta_created ON pgmq.meta (created_at);",
    ]
    with (
        sqlmigrate.scratch_database(pg_dsn, sqlmigrate.frozen_sql()) as migrated,
        sqlmigrate.scratch_database(pg_dsn, changed) as target,
    ):
        forward, backward = sqlmigrate.step(migrated, target), sqlmigrate.step(target, migrated)
        assert forward.by_hand == [] and backward.by_hand == []
        original = sqlschema.signature(migrated)
        migrated.execute(forward.sql.encode())
        assert (
            sqlschema.differences(sqlschema.signature(target), sqlschema.signature(migrated)) == []
        )
        migrated.execute(backward.sql.encode())
        assert sqlschema.differences(original, sqlschema.signature(migrated)) == []
    assert "CREATE OR REPLACE FUNCTION pgmq.metrics_all()" in forward.sql
    assert "DROP FUNCTION IF EXISTS pgmq._new_helper(integer);" in backward.sql


def test_make_flags_a_table_change_for_writing_by_hand(pg_dsn):
    changed = [*sqlmigrate.live_sql(), "ALTER TABLE pgmq.meta ADD COLUMN note text;"]
    with (
        sqlmigrate.scratch_database(pg_dsn, sqlmigrate.frozen_sql()) as migrated,
        sqlmigrate.scratch_database(pg_dsn, changed) as target,
    ):
        forward = sqlmigrate.step(migrated, target)
    assert forward.by_hand == ["table pgmq.meta"]
    assert "-- BY HAND: table pgmq.meta" in forward.sql


def test_migrate_refuses_an_upgrade_onto_a_foreign_pgmq_schema(scratch):
    with scratch.connect() as conn:
        done = scratch.manage("migrate", "django_pgmq", "0006")
        assert done.returncode == 0, done.stderr
        # Someone replaced our schema with a SQL-only pgmq install of their own.
        conn.execute("DROP SCHEMA pgmq CASCADE")
        conn.execute("CREATE SCHEMA pgmq")
        conn.execute("CREATE TABLE pgmq.theirs (x int)")
        before = applied(conn)

        result = scratch.manage("migrate")
        assert result.returncode != 0
        assert 'django-pgmq: schema "pgmq" already exists in this database' in result.stderr
        assert "Traceback" not in result.stderr
        assert applied(conn) == before
        assert conn.execute("SELECT to_regclass('pgmq.theirs') IS NOT NULL").fetchone()[0]
        assert conn.execute("SELECT to_regclass('pgmq.meta')").fetchone() == (None,)
        # ... and migrate zero does not drop it either.
        result = scratch.manage("migrate", "django_pgmq", "zero")
        assert result.returncode != 0
        assert conn.execute("SELECT to_regclass('pgmq.theirs') IS NOT NULL").fetchone()[0]
        assert applied(conn) == before


def test_migrate_refuses_an_upgrade_when_the_pgmq_extension_appeared(scratch):
    with scratch.connect() as conn:
        done = scratch.manage("migrate", "django_pgmq", "0006")
        assert done.returncode == 0, done.stderr
        before = applied(conn)
        fake_pgmq_extension(conn)
        result = scratch.manage("migrate")
        assert result.returncode != 0
        assert "django-pgmq: this database already has the pgmq extension installed" in (
            result.stderr
        )
        assert "Traceback" not in result.stderr
        assert applied(conn) == before


def test_migrate_zero_removes_everything_with_queues_of_every_kind(scratch):
    with scratch.connect() as conn:
        done = scratch.manage("migrate", "django_pgmq")
        assert done.returncode == 0, done.stderr
        populate(conn)
        done = scratch.manage("migrate", "django_pgmq", "zero")
        assert done.returncode == 0, done.stderr
        assert not has_pgmq_schema(conn)
        assert applied(conn) == []
        leftovers = conn.execute(
            "SELECT c.oid::regclass::text FROM pg_class c JOIN pg_namespace n "
            "ON n.oid = c.relnamespace WHERE n.nspname NOT IN ('pg_catalog', "
            "'information_schema', 'pg_toast') AND c.relname NOT LIKE 'django_migrations%%' "
            "UNION ALL SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n "
            "ON n.oid = p.pronamespace WHERE n.nspname NOT IN ('pg_catalog', "
            "'information_schema')"
        ).fetchall()
        assert leftovers == []


def test_check_compares_queues_of_every_kind(pg_dsn):
    """A change to how queues are made shows in the per-queue objects it makes."""
    changed = [
        *sqlmigrate.live_sql(),
        "CREATE OR REPLACE FUNCTION pgmq._tune_live_table(tbl text) RETURNS void "
        "LANGUAGE plpgsql AS $$ BEGIN EXECUTE format("
        "'ALTER TABLE pgmq.%I SET (fillfactor = 70)', tbl); END $$;",
    ]
    with (
        sqlmigrate.scratch_database(pg_dsn, sqlmigrate.live_sql(), queues=True) as live,
        sqlmigrate.scratch_database(pg_dsn, changed, queues=True) as target,
    ):
        found = sqlschema.differences(sqlschema.signature(live), sqlschema.signature(target))
    keys = [line.split("\n")[0] for line in found]
    assert "differs: table pgmq.q_k_plain" in keys
    assert "differs: function pgmq._tune_live_table(tbl text)" in keys


def test_a_changed_function_a_queue_index_uses_comes_with_a_reindex(pg_dsn):
    changed = [
        *sqlmigrate.live_sql(),
        "CREATE OR REPLACE FUNCTION pgmq._fifo_group(headers jsonb) RETURNS text "
        "LANGUAGE sql IMMUTABLE PARALLEL SAFE "
        "AS $fn$ SELECT coalesce(headers ->> 'x-pgmq-group', 'default') $fn$;",
    ]
    with (
        sqlmigrate.scratch_database(pg_dsn, sqlmigrate.live_sql(), queues=True) as live,
        sqlmigrate.scratch_database(pg_dsn, changed, queues=True) as target,
    ):
        forward = sqlmigrate.step(live, target)
        assert "REINDEX INDEX" in forward.sql
        assert "'pgmq._fifo_group(jsonb)'::regprocedure" in forward.sql
        before = live.execute(
            "SELECT relfilenode FROM pg_class WHERE relname = 'q_k_fifo_fifo_idx'"
        ).fetchone()
        live.execute(forward.sql.encode())
        after = live.execute(
            "SELECT relfilenode FROM pg_class WHERE relname = 'q_k_fifo_fifo_idx'"
        ).fetchone()
        assert before != after  # rebuilt
        assert sqlschema.differences(sqlschema.signature(target), sqlschema.signature(live)) == []


def test_who_may_run_a_helper_is_compared_and_written_without_its_body(pg_dsn):
    """A helper left executable by PUBLIC is a difference; make writes the REVOKE alone."""
    opened = [
        *sqlmigrate.live_sql(),
        "GRANT EXECUTE ON FUNCTION pgmq._require_queue(text) TO PUBLIC;",
    ]
    with (
        sqlmigrate.scratch_database(pg_dsn, opened) as migrated,
        sqlmigrate.scratch_database(pg_dsn, sqlmigrate.live_sql()) as live,
    ):
        found = sqlschema.differences(sqlschema.signature(live), sqlschema.signature(migrated))
        forward = sqlmigrate.step(migrated, live)
    assert [line.split("\n")[0] for line in found] == [
        "differs: function pgmq._require_queue(queue_name text)"
    ]
    assert forward.sql.splitlines()[1:] == [
        "REVOKE EXECUTE ON FUNCTION pgmq._require_queue(text) FROM PUBLIC;",
        "",
    ]


LAST_UNSQUASHED = sqlsquash.FINGERPRINT


@pytest.mark.skipif(not LAST_UNSQUASHED.exists(), reason="no release has squashed migrations yet")
def test_a_fresh_install_equals_the_last_unsquashed_schema(scratch):
    """A database at the last development migration before a release's squash is at the
    squash (Django's ``replaces``): it must have the schema a fresh install of the squash
    makes. The squash tool wrote the replaced chain's schema, with the queues of
    sqltools.squash.QUEUE_SETUP, to tests/fixtures/last_unsquashed_schema.json.

    It is compared at the squash itself (``migrate django_pgmq <squash>``), so later
    migrations do not touch it; the next release's squash writes the file again. The
    catalogue differs between server versions, so the file has one entry per major
    version (CI's two: 15 and 18). To retire it, delete the file: the test is then
    skipped.
    """
    document = json.loads(LAST_UNSQUASHED.read_text(encoding="utf-8"))
    with scratch.connect() as conn:
        server = sqlsquash.server_major(conn)
        if server not in document["servers"]:
            pytest.skip(
                f"the fingerprint has no entry for PostgreSQL {server} (it has "
                f"{', '.join(document['servers'])}): python -m django_pgmq.sqltools.squash "
                "--fingerprint-of DSN adds one"
            )
        done = scratch.manage("migrate", "django_pgmq", document["squash"], "-v", "0")
        assert done.returncode == 0, done.stderr
        sqlsquash.populate(conn)
        installed = sqlsquash.fingerprint(sqlsquash.described(conn))
    expected = document["servers"][server]
    assert sorted(expected.keys() - installed.keys()) == [], "missing after a fresh install"
    assert sorted(installed.keys() - expected.keys()) == [], "unexpected after a fresh install"
    assert sorted(k for k in expected if expected[k] != installed[k]) == [], "defined otherwise"
