"""The live tables' layout for HOT reads: no vt index, room on each page (fillfactor)."""

from __future__ import annotations

import psycopg
import pytest
from psycopg import sql

pytestmark = pytest.mark.usefixtures("django_db_setup")


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    return pg_connect()


def live_tables(db: psycopg.Connection, queue: str) -> dict[str, list[str] | None]:
    """Each live table (the queue's, or its partitions) with its storage options."""
    return dict(
        db.execute(
            "SELECT c.relname, c.reloptions FROM pg_class c "
            "JOIN pg_namespace n ON n.oid = c.relnamespace AND n.nspname = 'pgmq' "
            "WHERE c.relkind = 'r' AND (c.relname = %s OR c.relname LIKE %s)",
            [f"q_{queue}", f"q_{queue}\\_%"],
        ).fetchall()
    )


def indexed_columns(db: psycopg.Connection, queue: str) -> set[str]:
    """Columns of the indexes on the live table (and its partitions)."""
    return {
        row[0]
        for row in db.execute(
            "SELECT a.attname FROM pg_index i "
            "JOIN pg_class c ON c.oid = i.indrelid "
            "JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum = ANY(i.indkey) "
            "WHERE c.relname = %s OR c.relname LIKE %s",
            [f"q_{queue}", f"q_{queue}\\_%"],
        ).fetchall()
    }


def hot_updates(db: psycopg.Connection, table: str) -> tuple[int, int]:
    """(updates, HOT updates) of a table, from this transaction's view of the statistics."""
    db.execute("SELECT pg_stat_force_next_flush()")
    db.execute("SELECT pg_stat_clear_snapshot()")
    return db.execute(
        "SELECT n_tup_upd + 0, n_tup_hot_upd + 0 FROM pg_stat_user_tables "
        "WHERE schemaname = 'pgmq' AND relname = %s",
        [table],
    ).fetchone()


@pytest.mark.parametrize("function", ["create", "create_non_partitioned", "create_unlogged"])
def test_a_plain_queue_has_room_on_its_pages_and_no_vt_index(db, queue_name, function):
    db.execute(sql.SQL("SELECT pgmq.{}(%s)").format(sql.Identifier(function)), [queue_name])
    try:
        assert live_tables(db, queue_name) == {f"q_{queue_name}": ["fillfactor=80"]}
        assert indexed_columns(db, queue_name) == {"msg_id"}
    finally:
        db.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


@pytest.mark.parametrize(("interval", "retention"), [("10", "1000"), ("1 hour", "1 day")])
def test_every_partition_of_a_partitioned_queue_has_the_same_layout(
    db, queue_name, interval, retention
):
    db.execute("SELECT pgmq.create_partitioned(%s, %s, %s, 2)", [queue_name, interval, retention])
    try:
        db.execute("SELECT pgmq.send_batch(%s, array_fill('{}'::jsonb, ARRAY[25]))", [queue_name])
        db.execute("SELECT pgmq.maintain_partitions(%s)", [queue_name])
        tables = live_tables(db, queue_name)
        assert len(tables) >= 3  # the default partition and at least two ranges
        assert set(map(tuple, tables.values())) == {("fillfactor=80",)}
        assert "vt" not in indexed_columns(db, queue_name)
    finally:
        db.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


def test_reads_update_rows_in_place_hot(db, queue_name):
    """A read's update adds no index entries (HOT): the point of this layout."""
    db.execute("SELECT pgmq.create(%s)", [queue_name])
    try:
        db.execute("SELECT pgmq.send_batch(%s, array_fill('{}'::jsonb, ARRAY[50]))", [queue_name])
        before = hot_updates(db, f"q_{queue_name}")
        for _ in range(5):
            db.execute("SELECT * FROM pgmq.read(%s, 0, 10)", [queue_name])
        updates, hot = (
            a - b for a, b in zip(hot_updates(db, f"q_{queue_name}"), before, strict=True)
        )
        assert updates == 50
        assert hot >= 40  # a full page may leave a few non-HOT, never most
    finally:
        db.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


def test_reads_skip_many_invisible_messages_at_the_head_without_a_vt_index(db, queue_name):
    """With most of the queue in flight ahead, read still finds the visible messages in order."""
    db.execute("SELECT pgmq.create(%s)", [queue_name])
    try:
        ids = [
            r[0]
            for r in db.execute(
                "SELECT * FROM pgmq.send_batch(%s, array_fill('{}'::jsonb, ARRAY[2000]))",
                [queue_name],
            ).fetchall()
        ]
        held = db.execute("SELECT msg_id FROM pgmq.read(%s, 600, 1500)", [queue_name]).fetchall()
        assert [r[0] for r in held] == ids[:1500]
        got = db.execute("SELECT msg_id FROM pgmq.read(%s, 600, 10)", [queue_name]).fetchall()
        assert [r[0] for r in got] == ids[1500:1510]
    finally:
        db.execute("SELECT pgmq.drop_queue(%s)", [queue_name])
