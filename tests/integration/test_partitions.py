"""Native partitioned queues (45_partitions.sql): creation ahead, retention, every operation."""

from __future__ import annotations

import subprocess
import sys
import threading
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb

from django_pgmq import (
    InvalidArgument,
    QueueManager,
    QueueNameConflict,
    QueueNotFound,
    index_builds,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def conn(pg_connect: Callable[..., psycopg.Connection]) -> psycopg.Connection:
    return pg_connect()


@pytest.fixture
def partitioned(manager: QueueManager) -> Iterator[Callable[..., str]]:
    """Create committed partitioned queues; dropped after the test."""
    made: list[str] = []

    def make(interval: object = 10, retention: object = 30, premake: int = 2, **kw) -> str:
        name = kw.get("name") or f"p_{uuid.uuid4().hex[:12]}"
        manager.create_partitioned_queue(name, interval, retention, premake)
        made.append(name)
        return name

    yield make
    for name in made:
        manager.drop_queue(name)


def ranges(manager: QueueManager, queue: str, table: str = "q") -> list[tuple]:
    """(start, end) of each partition of the queue's live or archive table; default last."""
    prefix = f"{table}_"
    return [
        (p.range_start, p.range_end)
        for p in manager.list_partitions(queue)
        if p.partitioned_table.startswith(prefix)
    ]


def homes(conn: psycopg.Connection, queue: str, table: str = "q") -> dict[int, str]:
    """Which partition holds each msg_id, read from the table itself."""
    query = sql.SQL("SELECT msg_id, tableoid::regclass::text FROM pgmq.{}").format(
        sql.Identifier(f"{table}_{queue}")
    )
    return dict(conn.execute(query).fetchall())


def plant(conn: psycopg.Connection, queue: str, table: str, column: str, at: datetime) -> None:
    """Insert a row straight into a table with an old key (as if written long ago)."""
    columns = ["vt", "message", column]
    values = [at, Jsonb({"old": True}), at]
    if table == "a":
        columns.append("msg_id")
        values.append(10**12 + int(at.timestamp()))
    query = sql.SQL("INSERT INTO pgmq.{} ({}) VALUES ({})").format(
        sql.Identifier(f"{table}_{queue}"),
        sql.SQL(", ").join(map(sql.Identifier, columns)),
        sql.SQL(", ").join(sql.Placeholder() * len(values)),
    )
    conn.execute(query, values)


# -- creation -----------------------------------------------------------------


def test_create_makes_partitioned_tables_with_partitions_ahead(manager, partitioned, conn):
    queue = partitioned(10, 30, premake=2)
    info = [q for q in manager.list_queues() if q.queue_name == queue]
    assert [(q.is_partitioned, q.is_unlogged) for q in info] == [(True, False)]
    expected = [("0", "10"), ("10", "20"), ("20", "30"), (None, None)]
    assert ranges(manager, queue, "q") == expected
    assert ranges(manager, queue, "a") == expected
    kinds = conn.execute(
        "SELECT relname, relkind FROM pg_class WHERE relname IN (%s, %s)",
        [f"q_{queue}", f"a_{queue}"],
    ).fetchall()
    assert sorted(kinds) == [(f"a_{queue}", "p"), (f"q_{queue}", "p")]
    manager.create_partitioned_queue(queue, 10, 30, 2)  # again: a no-op
    assert ranges(manager, queue, "q") == expected


def test_time_partitions_are_aligned_in_utc(manager, partitioned, conn):
    queue = partitioned("1 day", "7 days", premake=1)
    [(now,)] = conn.execute("SELECT clock_timestamp()").fetchall()
    today = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    day = timedelta(days=1)
    iso = [d.strftime("%Y-%m-%dT%H:%M:%S+00") for d in (today, today + day, today + 2 * day)]
    assert ranges(manager, queue, "q")[:2] == [(iso[0], iso[1]), (iso[1], iso[2])]
    names = [p.partition_name for p in manager.list_partitions(queue)]
    assert f"q_{queue}_p{today:%Y%m%d}" in names

    monthly = partitioned("3 months", "1 year", premake=1)
    [(start, end), *_] = ranges(manager, monthly, "q")
    first = datetime.fromisoformat(start.replace("+00", "+00:00"))
    assert (first.day, first.hour, (first.month - 1) % 3) == (1, 0, 0)
    assert first <= now < datetime.fromisoformat(end.replace("+00", "+00:00"))


def test_a_partitioned_key_must_not_be_taken(manager, partitioned, queue):
    with pytest.raises(QueueNameConflict, match="already exists and is not partitioned"):
        manager.create_partitioned_queue(queue)
    name = partitioned()
    with pytest.raises(QueueNameConflict, match="maps to table"):
        manager.create_partitioned_queue(name.upper())


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (("10", "30", 0), "premake must be at least 1, got 0"),
        (("0", "30", 1), "partition_interval must be a positive integer for msg_id ranges"),
        (("soon", "30", 1), "partition_interval must be a positive integer (msg_id ranges) or"),
        (("1 month 2 days", "1 year", 1), "partition_interval must be whole months ('3 months')"),
        (("10 milliseconds", "1 day", 1), "partition_interval must be at least 1 second"),
        (("10", "1 day", 1), "retention_interval must be a positive integer (a number of msg_ids)"),
        (("1 day", "30", 1), "retention_interval must be a time interval such as '7 days'"),
        (("1 day", "-1 day", 1), "retention_interval must be at least 1 second"),
        ((None, "30", 1), "partition_interval must be given, got: NULL"),
    ],
)
def test_bad_arguments_give_pgmqs_texts_and_create_nothing(conn, queue_name, args, text):
    with pytest.raises(psycopg.Error) as info:
        conn.execute(
            "SELECT pgmq.create_partitioned(queue_name => %s, partition_interval => %s, "
            "retention_interval => %s, premake => %s)",
            [queue_name, *args],
        )
    assert info.value.sqlstate == "PQ004"
    assert info.value.diag.message_primary.startswith(text)
    assert conn.execute("SELECT to_regclass(%s)", [f"pgmq.q_{queue_name}"]).fetchone() == (None,)


# -- operations across partitions ----------------------------------------------


def test_send_read_archive_and_metrics_across_partition_boundaries(manager, partitioned, conn):
    queue = partitioned(10, 1000, premake=2)
    ids = manager.send_batch(queue, [{"n": n} for n in range(25)])
    assert ids == list(range(1, 26))
    assert len(set(homes(conn, queue).values())) == 3  # p0, p10, p20
    read = manager.read(queue, vt=30, qty=15)
    assert [m.msg_id for m in read] == list(range(1, 16))
    assert manager.archive(queue, [m.msg_id for m in read]) == list(range(1, 16))
    archived = homes(conn, queue, "a")
    assert sorted(archived) == list(range(1, 16))
    assert {archived[1], archived[15]} == {f"pgmq.a_{queue}_p0", f"pgmq.a_{queue}_p10"}
    m = manager.metrics(queue)
    assert (m.queue_length, m.queue_visible_length, m.total_messages) == (10, 10, 25)
    assert m.default_partition_length == 0
    assert [m.msg_id for m in manager.read(queue, vt=30, qty=20)] == list(range(16, 26))


def test_every_operation_works_on_a_partitioned_queue(manager, partitioned, conn):
    queue = partitioned(5, 1000, premake=3)
    ids = manager.send_batch(queue, [{"n": n} for n in range(12)], headers=[{"h": 1}] * 12)
    assert manager.delete(queue, ids[0]) is True
    [popped] = manager.pop(queue)
    assert popped.msg_id == ids[1]
    moved = manager.set_vt(queue, [ids[2], ids[7]], 60)
    assert [m.msg_id for m in moved] == [ids[2], ids[7]]
    assert [m.msg_id for m in manager.read(queue, vt=30, qty=2)] == [ids[3], ids[4]]
    manager.set_vt(queue, ids[3], 0)
    assert manager.read(queue, vt=30, qty=1)[0].msg_id == ids[3]
    assert manager.purge_queue(queue) == 10
    assert manager.metrics(queue).queue_length == 0

    # FIFO groups and their index on a partitioned table.
    conn.execute("SELECT pgmq.create_fifo_index(%s)", [queue])
    for n, group in enumerate(["a", "a", "b", "a", "b", "c"]):
        manager.send(queue, {"n": n}, headers={"x-pgmq-group": group})
    first = manager.read_grouped(queue, 30, 10, "head")
    assert [m.message["n"] for m in first] == [0, 2, 5]
    assert manager.read_grouped(queue, 30, 10, "fifo") == []  # every group's head is in flight
    manager.delete(queue, [m.msg_id for m in first])
    assert [m.message["n"] for m in manager.read_grouped(queue, 30, 10, "rr")] == [1, 4, 3]

    # Topics deliver into it.
    key = f"k{uuid.uuid4().hex[:8]}"
    manager.bind_topic(f"{key}.*", queue)
    assert manager.send_topic(f"{key}.x", {"via": "topic"}) == 1
    assert manager.read(queue, vt=30, qty=10)[-1].message == {"via": "topic"}
    assert manager.drop_queue(queue) is True
    assert manager.list_topic_bindings(queue) == []


def test_rows_past_the_premade_range_wait_in_the_default_partition(manager, partitioned, conn):
    queue = partitioned(10, 1000, premake=1)  # partitions for msg_ids 0-19
    manager.send_batch(queue, [{"n": n} for n in range(35)])
    assert manager.metrics(queue).default_partition_length == 16  # ids 20..35
    [listed] = [m for m in manager.metrics_all() if m.queue_name == queue]
    assert (listed.queue_length, listed.total_messages, listed.default_partition_length) == (
        35,
        35,
        16,
    )
    changes = manager.maintain_partitions(queue)
    created = [(c.partitioned_table, c.range_start, c.rows_moved) for c in changes]
    assert (f"q_{queue}", "20", 10) in created
    assert (f"q_{queue}", "30", 6) in created
    assert (f"q_{queue}", "40", 0) in created  # premake: one ahead of the current range
    assert manager.metrics(queue).default_partition_length == 0
    assert sorted(homes(conn, queue)) == list(range(1, 36))
    assert homes(conn, queue)[35] == f"pgmq.q_{queue}_p30"
    assert manager.maintain_partitions(queue) == []  # nothing left to do


def test_retention_drops_whole_partitions_behind_the_current_id(manager, partitioned, conn):
    queue = partitioned(10, 30, premake=1)
    ids = manager.send_batch(queue, [{"n": n} for n in range(45)])
    manager.archive(queue, ids[:5])
    changes = manager.maintain_partitions(queue)
    dropped = sorted((c.partitioned_table, c.range_start) for c in changes if c.action == "dropped")
    # next id 46, retention 30: partitions ending at or below id 16 go, with their rows.
    assert dropped == [(f"a_{queue}", "0"), (f"q_{queue}", "0")]
    assert min(homes(conn, queue)) == 10
    assert homes(conn, queue, "a") == {}
    assert ranges(manager, queue, "q")[0] == ("10", "20")


def test_time_retention_drops_old_partitions_of_queue_and_archive(manager, partitioned, conn):
    queue = partitioned("1 day", "7 days", premake=1)
    [(now,)] = conn.execute("SELECT clock_timestamp()").fetchall()
    plant(conn, queue, "q", "enqueued_at", now - timedelta(days=30))
    plant(conn, queue, "q", "enqueued_at", now - timedelta(days=2))
    plant(conn, queue, "a", "archived_at", now - timedelta(days=30))
    assert manager.metrics(queue).default_partition_length == 3
    changes = manager.maintain_partitions(queue)
    summary = sorted((c.partitioned_table, c.action, c.rows_moved) for c in changes)
    assert summary == [
        (f"a_{queue}", "created", 1),
        (f"a_{queue}", "dropped", None),
        (f"q_{queue}", "created", 1),
        (f"q_{queue}", "created", 1),
        (f"q_{queue}", "dropped", None),
    ]
    assert manager.metrics(queue).queue_length == 1  # the 2-day-old message stays
    assert manager.metrics(queue).default_partition_length == 0


def test_long_names_get_distinct_partition_names_within_63_bytes(manager, partitioned, conn):
    stem = "x" * 40
    queues = [partitioned(10, 100, 1, name=f"{stem}{n}{uuid.uuid4().hex[:6]}") for n in (1, 2)]
    names = set()
    for queue in queues:
        conn.execute(
            sql.SQL("ALTER TABLE pgmq.{} ALTER COLUMN msg_id RESTART WITH 1000000000000000").format(
                sql.Identifier(f"q_{queue}")
            )
        )
        manager.send(queue, {"big": True})
        manager.maintain_partitions(queue)
        names |= {p.partition_name for p in manager.list_partitions(queue)}
    assert all(len(n) <= 63 for n in names)
    long = [n for n in names if n.endswith("_p1000000000000000")]
    assert len(long) == 4  # live and archive, of each queue: none shared


def test_drop_removes_every_partition_and_the_configuration(manager, conn):
    queue = f"p_{uuid.uuid4().hex[:12]}"
    manager.create_partitioned_queue(queue, "1 hour", "1 day", 2)
    assert manager.drop_queue(queue) is True
    left = conn.execute(
        "SELECT relname FROM pg_class WHERE relname LIKE %s", [f"%\\_{queue}%"]
    ).fetchall()
    assert left == []
    assert conn.execute(
        "SELECT count(*) FROM pgmq.partition_config WHERE queue_name = %s", [queue]
    ).fetchone() == (0,)
    assert queue not in manager.partitioned_queues()


def test_a_plain_queue_has_no_default_partition_length(manager, queue):
    assert manager.metrics(queue).default_partition_length is None
    with pytest.raises(InvalidArgument, match="is not partitioned"):
        manager.maintain_partitions(queue)


# -- convert_archive_partitioned ------------------------------------------------


@pytest.mark.parametrize(
    ("interval", "column"), [("10", "msg_id"), ("1 day", "archived_at")], ids=["ids", "time"]
)
def test_convert_archive_keeps_its_rows_and_partitions_new_ones(
    manager, queue, conn, interval, column
):
    ids = manager.send_batch(queue, [{"n": n} for n in range(3)])
    manager.archive(queue, ids[:2])
    manager.convert_archive_partitioned(queue, interval, None, 2)
    [(kind, key)] = conn.execute(
        "SELECT c.relkind, pg_get_partkeydef(c.oid) FROM pg_class c WHERE c.oid = %s::regclass",
        [f"pgmq.a_{queue}"],
    ).fetchall()
    assert (kind, key) == ("p", f"RANGE ({column})")
    history = f"pgmq.a_{queue}_history"
    assert homes(conn, queue, "a") == {ids[0]: history, ids[1]: history}
    assert manager.archive(queue, ids[2]) is True
    assert sorted(homes(conn, queue, "a")) == ids
    assert queue in manager.partitioned_queues()
    assert not next(q for q in manager.list_queues() if q.queue_name == queue).is_partitioned
    manager.convert_archive_partitioned(queue, interval)  # already done: a no-op
    assert manager.drop_queue(queue) is True


def test_convert_archive_of_a_missing_queue(manager):
    with pytest.raises(QueueNotFound):
        manager.convert_archive_partitioned(f"h10_missing_{uuid.uuid4().hex[:8]}")


# -- concurrent maintenance -----------------------------------------------------


def test_concurrent_maintenance_creates_each_partition_once(manager, partitioned, pg_connect, conn):
    queue = partitioned(10, 1000, premake=1)
    manager.send_batch(queue, [{"n": n} for n in range(60)])  # 40 rows in the default
    holder = pg_connect(autocommit=False)
    holder.execute("SELECT pgmq.acquire_queue_lock(%s)", [queue])  # both runs meet it
    results: dict[int, list] = {}
    errors: list[BaseException] = []
    start = threading.Barrier(2)

    def run(n: int) -> None:
        try:
            with psycopg.connect(conn.info.dsn, autocommit=True) as c:
                start.wait(timeout=30)
                results[n] = c.execute(
                    "SELECT partitioned_table, action, partition_name "
                    "FROM pgmq.maintain_partitions(%s)",
                    [queue],
                ).fetchall()
        except BaseException as exc:  # reported below
            errors.append(exc)

    def both() -> list:
        threads = [threading.Thread(target=run, args=(n,)) for n in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=60)
        assert errors == []
        return results[0] + results[1]

    # The queue's lock held (a run, or a create or drop not committed): each run waits at
    # most its bound for it, then skips the queue.
    assert both() == [(None, "queue skipped", None)] * 2
    holder.rollback()
    done = both()  # one run does the work, the other skips or finds nothing left to do
    assert len(done) == len(set(done))  # no partition created (or dropped) twice
    assert {name for _, action, name in done if action == "created"} >= {
        f"q_{queue}_p20",
        f"q_{queue}_p50",
        f"q_{queue}_p60",
    }
    assert manager.metrics(queue).default_partition_length == 0
    assert manager.maintain_partitions(queue) == []


def test_two_pgmq_maintain_processes_at_once(manager, partitioned, subprocess_env):
    queues = [partitioned(10, 20, premake=1) for _ in range(2)]
    for queue in queues:
        manager.send_batch(queue, [{"n": n} for n in range(50)])
    command = [sys.executable, "manage.py", "pgmq_maintain", *queues, "--lock-timeout", "30"]
    runs = [
        subprocess.Popen(
            command, cwd=ROOT, env=subprocess_env, stdout=subprocess.PIPE, stderr=subprocess.PIPE
        )
        for _ in range(2)
    ]
    outputs = [run.communicate(timeout=120) for run in runs]
    assert [run.returncode for run in runs] == [0, 0], outputs
    lines = [line for out, _ in outputs for line in out.decode().splitlines()]
    created = [line for line in lines if " created " in line]
    assert len(created) == len(set(created))
    for queue in queues:
        assert manager.metrics(queue).default_partition_length == 0
        assert ranges(manager, queue, "q")[0][0] == "30"  # ids below 31 (51 - 20) dropped


def test_converting_an_already_partitioned_archive_gives_pgmqs_notice(manager, queue, conn):
    manager.convert_archive_partitioned(queue, "10", None, 2)
    notices: list[str] = []
    conn.add_notice_handler(lambda diag: notices.append(diag.message_primary))
    conn.execute("SELECT pgmq.convert_archive_partitioned(%s)", [queue])
    assert notices == [f"Table a_{queue}s is already partitioned"]  # pgmq's text, its 's' too


# -- create on a queue that exists ------------------------------------------------


def table_state(conn: psycopg.Connection, queue: str) -> list[tuple]:
    """What create must not change: the queue's row, its tables' kinds and storage options."""
    meta = conn.execute(
        "SELECT queue_name, is_partitioned, is_unlogged, created_at FROM pgmq.meta "
        "WHERE queue_name = %s",
        [queue],
    ).fetchall()
    tables = conn.execute(
        "SELECT relname, relkind, relpersistence, reloptions FROM pg_class "
        "WHERE relnamespace = 'pgmq'::regnamespace AND relname LIKE %s ORDER BY relname",
        [f"%\\_{queue}%"],
    ).fetchall()
    attrs = conn.execute("SELECT pgmq.get_queue_attributes(%s)", [queue]).fetchall()
    return [*meta, *tables, *attrs]


@pytest.mark.parametrize("kind", ["plain", "unlogged", "partitioned", "attributes", "archive"])
def test_create_of_any_kind_leaves_an_existing_queue_as_it_is(manager, partitioned, conn, kind):
    """As pgmq's create, create_unlogged and create_non_partitioned (kombu's pgmq transport
    calls create on every declare): an existing queue of any kind is left as it is."""
    name = f"ex_{uuid.uuid4().hex[:12]}"
    if kind == "partitioned":
        partitioned(name=name)
    else:
        manager.create_queue(name, unlogged=kind == "unlogged")
    if kind == "attributes":
        manager.set_queue_attributes(name, priorities=True, delivery_delay=5)
        index_builds.wait_for_background()  # its priority index, built after the commit
    if kind == "archive":
        manager.convert_archive_partitioned(name, "10", None, 2)
    [msg_id] = manager.send_batch(name, [{"n": 1}])
    before = table_state(conn, name)
    for create in ("create", "create_unlogged", "create_non_partitioned", "create"):
        conn.execute(f"SELECT pgmq.{create}(%s)", [name])
    assert table_state(conn, name) == before
    assert [m.msg_id for m in manager.read(name, vt=0, qty=5)] == (
        [] if kind == "attributes" else [msg_id]
    )
    if kind != "partitioned":
        manager.drop_queue(name)
