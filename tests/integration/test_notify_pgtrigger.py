"""The insert-notify trigger as a django-pgtrigger trigger: SQL and Python paths, its commands."""

from __future__ import annotations

import re
import subprocess
import sys
import uuid
from collections.abc import Callable, Iterator

import pgtrigger
import psycopg
import pytest
from django.core.management import call_command
from psycopg import sql

from django_pgmq import QueueManager, QueueNotFound
from django_pgmq.notify import (
    NOTIFY_TRIGGER,
    install_notify_trigger,
    notify_trigger_name,
    queue_model,
    register_queue_triggers,
)

ANSI = re.compile(r"\x1b\[[0-9;]*m")
TRIGGER = """
SELECT t.tgname::text, t.tgfoid::regprocedure::text, pg_get_triggerdef(t.oid),
       obj_description(t.oid, 'pg_trigger'), t.tgtype, t.tgdeferrable, t.tginitdeferred,
       t.tgenabled, encode(t.tgargs, 'escape')
FROM pg_trigger t
WHERE t.tgrelid = to_regclass(%s) AND t.tgparentid = 0 AND NOT t.tgisinternal
  AND t.tgname <> 'pgmq_workflow_ack'  -- every queue's (sql/55_workflows.sql), not notify's
"""


@pytest.fixture
def conn(pg_connect: Callable[..., psycopg.Connection]) -> psycopg.Connection:
    return pg_connect()


@pytest.fixture
def make_queue(manager: QueueManager) -> Iterator[Callable[..., str]]:
    """Create committed queues (plain or partitioned); dropped after the test."""
    made: list[str] = []

    def make(prefix: str = "t_", *, partitioned: bool = False) -> str:
        name = f"{prefix}{uuid.uuid4().hex[:12]}"
        if partitioned:
            manager.create_partitioned_queue(name, 10, 1000, premake=1)
        else:
            manager.create_queue(name)
        made.append(name)
        return name

    yield make
    for name in made:
        manager.drop_queue(name)


def triggers(conn: psycopg.Connection, queue: str) -> list[tuple]:
    table = f'pgmq."q_{queue.lower()}"'
    return conn.execute(TRIGGER, [table]).fetchall()


def uri(queue: str) -> str:
    return f"django_pgmq.q_{queue.lower()}:notify_insert"


def pgtrigger_command(capsys: pytest.CaptureFixture, *args: str) -> dict[str, str]:
    """Run ``manage.py pgtrigger <args>``; for ``ls``, the status of each URI it lists."""
    capsys.readouterr()
    call_command("pgtrigger", *args)
    statuses = {}
    for line in ANSI.sub("", capsys.readouterr().out).splitlines():
        status, _enabled, listed = line.split()
        statuses[listed] = status
    return statuses


def listen_and_send(conn: psycopg.Connection, queue: str, manager: QueueManager) -> list:
    """LISTEN on the queue's channel, send a message from Django, return what arrived."""
    channel = manager.notify_channel(queue)
    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
    manager.send(queue, {"n": 1})
    conn.execute("SELECT pg_notify(%s, 'marker')", [channel])
    got = []
    for note in conn.notifies(timeout=10):
        if note.payload == "marker":
            return got
        got.append((note.channel, note.payload))
    raise AssertionError(f"the marker never arrived (got {got})")


# -- one trigger, two paths ---------------------------------------------------


@pytest.mark.parametrize(
    ("prefix", "partitioned"),
    [("t_", False), ("Mixed_", False), ("with-dash-", False), ("t_", True)],
    ids=["plain", "mixed-case", "dash", "partitioned"],
)
def test_sql_path_and_python_path_install_the_same_trigger(
    manager, make_queue, conn, prefix, partitioned
):
    queue = make_queue(prefix, partitioned=partitioned)
    manager.enable_notify(queue, 0)
    by_sql = triggers(conn, queue)
    assert len(by_sql) == 1
    assert by_sql[0][0] == notify_trigger_name(queue)
    assert by_sql[0][1] == "pgmq.notify_queue_listeners()"
    assert by_sql[0][8] == f"{queue}\\000"  # the stored name, as the trigger argument

    manager.disable_notify(queue)
    assert triggers(conn, queue) == []
    install_notify_trigger(queue)
    assert triggers(conn, queue) == by_sql


def test_the_name_is_the_same_in_python_and_sql(conn):
    for queue in ["orders", "Orders_X", "a-b", "a_b", "x" * 47, "1st"]:
        [(in_sql,)] = conn.execute("SELECT pgmq._notify_trigger_name(%s)", [queue]).fetchall()
        assert notify_trigger_name(queue) == in_sql
        assert len(in_sql) <= 63
    assert notify_trigger_name("a-b") != notify_trigger_name("a_b")


def test_a_trigger_installed_by_pgtrigger_notifies(manager, make_queue, conn):
    queue = make_queue("Mixed_")
    install_notify_trigger(queue)  # no throttle row: every commit notifies
    assert listen_and_send(conn, queue, manager) == [(f"pgmq.q_{queue}.INSERT", "")]


def test_partitioned_queue_notifies_once_per_commit(manager, make_queue, conn):
    queue = make_queue(partitioned=True)
    manager.enable_notify(queue, 0)
    channel = manager.notify_channel(queue)
    conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(channel)))
    manager.send_batch(queue, [{"n": n} for n in range(25)])  # rows in three partitions
    conn.execute("SELECT pg_notify(%s, 'marker')", [channel])
    got = [n.payload for n in conn.notifies(timeout=10, stop_after=2)]
    assert got == ["", "marker"]


# -- pgtrigger's commands -----------------------------------------------------


def test_pgtrigger_ls_shows_queue_triggers_installed(manager, make_queue, capsys):
    on, dashed, off = make_queue(), make_queue("with-dash-"), make_queue()
    manager.enable_notify(on)
    manager.enable_notify(dashed, 0)
    statuses = pgtrigger_command(capsys, "ls")
    assert statuses[uri(on)] == "INSTALLED"
    assert statuses[uri(dashed)] == "INSTALLED"
    assert uri(off) not in statuses
    assert not any(status == "PRUNE" for status in statuses.values())


def test_install_and_prune_leave_queue_triggers_alone(manager, make_queue, conn, capsys):
    queues = [make_queue(), make_queue(partitioned=True)]
    for queue in queues:
        manager.enable_notify(queue, 100)
    before = {q: triggers(conn, q) for q in queues}
    oids = conn.execute(
        "SELECT array_agg(oid ORDER BY oid) FROM pg_trigger WHERE tgname = ANY(%s)",
        [[notify_trigger_name(q) for q in queues]],
    ).fetchone()

    pgtrigger_command(capsys, "prune")
    pgtrigger_command(capsys, "prune", "--schema", "pgmq")  # even with pgmq on the search path
    assert {q: triggers(conn, q) for q in queues} == before
    workflow_triggers = conn.execute(
        "SELECT count(*) FROM pg_trigger WHERE tgname = 'pgmq_workflow_ack' AND tgparentid = 0"
        " AND tgrelid = ANY(%s::regclass[])",
        [[f'pgmq."q_{q.lower()}"' for q in queues]],
    ).fetchone()
    assert workflow_triggers == (2,)  # prune leaves the workflows' trigger alone too
    assert (
        conn.execute(
            "SELECT array_agg(oid ORDER BY oid) FROM pg_trigger WHERE tgname = ANY(%s)",
            [[notify_trigger_name(q) for q in queues]],
        ).fetchone()
        == oids
    )

    pgtrigger_command(capsys, "install")  # re-created, identical
    assert {q: triggers(conn, q) for q in queues} == before
    statuses = pgtrigger_command(capsys, "ls")
    assert [statuses[uri(q)] for q in queues] == ["INSTALLED", "INSTALLED"]
    assert [
        t.throttle_interval_ms for t in manager.list_notify_throttles() if t.queue_name in queues
    ] == [100, 100]


def test_uninstall_then_install_through_pgtrigger(manager, make_queue, conn, capsys):
    first, second = make_queue(), make_queue()
    manager.enable_notify(first, 0)
    manager.enable_notify(second, 0)
    before = triggers(conn, first)
    pgtrigger_command(capsys, "uninstall", uri(first))
    assert triggers(conn, first) == []
    statuses = pgtrigger_command(capsys, "ls")
    assert statuses[uri(first)] == "UNINSTALLED"
    # The function is shared and pgtrigger's uninstall drops only the trigger.
    assert listen_and_send(conn, second, manager) == [(f"pgmq.q_{second}.INSERT", "")]
    pgtrigger_command(capsys, "install", uri(first))
    assert triggers(conn, first) == before


def test_a_changed_comment_shows_outdated_until_reinstalled(manager, make_queue, conn, capsys):
    queue = make_queue()
    manager.enable_notify(queue)
    conn.execute(
        sql.SQL("COMMENT ON TRIGGER {} ON pgmq.{} IS 'old'").format(
            sql.Identifier(notify_trigger_name(queue)), sql.Identifier(f"q_{queue}")
        )
    )
    assert pgtrigger_command(capsys, "ls")[uri(queue)] == "OUTDATED"
    pgtrigger_command(capsys, "install", uri(queue))
    assert pgtrigger_command(capsys, "ls")[uri(queue)] == "INSTALLED"


def test_dropping_a_queue_removes_its_trigger_and_registration(manager, make_queue, conn):
    queue = make_queue()
    manager.enable_notify(queue)
    assert queue in register_queue_triggers()
    assert uri(queue) in {NOTIFY_TRIGGER.get_uri(m) for m, _ in pgtrigger.registry.registered()}
    manager.drop_queue(queue)
    assert conn.execute(
        "SELECT count(*) FROM pg_trigger WHERE tgname = %s", [notify_trigger_name(queue)]
    ).fetchone() == (0,)
    assert queue not in register_queue_triggers()
    assert uri(queue) not in {NOTIFY_TRIGGER.get_uri(m) for m, _ in pgtrigger.registry.registered()}


def test_registry_follows_enable_and_disable(manager, make_queue):
    queue = make_queue()
    assert queue not in register_queue_triggers()
    manager.enable_notify(queue)
    assert queue in register_queue_triggers()
    assert pgtrigger.registry.registered(uri(queue))[0][0] is queue_model(queue)
    manager.disable_notify(queue)
    assert queue not in register_queue_triggers()
    with pytest.raises(KeyError):
        pgtrigger.registry.registered(uri(queue))


REGISTER = (
    "import django; django.setup(); "
    "from django_pgmq.notify import register_queue_triggers; "
    "print(register_queue_triggers())"
)


def test_an_unreachable_or_unmigrated_database_registers_nothing(
    conn, subprocess_env, test_database_url
):
    """A fresh process on a database without pgmq (or none at all) starts and says so."""
    bare = f"h10_bare_{uuid.uuid4().hex[:8]}"
    conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(bare)))
    try:
        for dbname in (bare, f"h10_missing_{uuid.uuid4().hex[:8]}"):
            url = test_database_url.rsplit("/", 1)[0] + "/" + dbname
            done = subprocess.run(
                [sys.executable, "-c", REGISTER],
                env={**subprocess_env, "DATABASE_URL": url},
                capture_output=True,
                text=True,
                timeout=120,
            )
            assert done.returncode == 0, done.stderr
            assert done.stdout.strip() == "None"
            assert "queue triggers not registered with pgtrigger" in done.stderr
    finally:
        conn.execute(sql.SQL("DROP DATABASE {}").format(sql.Identifier(bare)))


def test_notify_channel_uses_the_stored_name(manager, make_queue):
    queue = make_queue("Mixed_")
    assert manager.notify_channel(queue.lower()) == f"pgmq.q_{queue}.INSERT"
    with pytest.raises(QueueNotFound):
        manager.notify_channel("h10_missing_queue")
