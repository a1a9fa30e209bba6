"""Queue attributes through the Python API and the management commands."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Iterator
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError
from django.db import connection
from django.utils import timezone

import django_pgmq
from django_pgmq import InvalidArgument, QueueManager, QueueNotFound

ROOT = Path(__file__).resolve().parents[2]
COMMANDS = ["pgmq_attributes", "pgmq_pause", "pgmq_resume"]


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out, stderr=StringIO())
    return out.getvalue()


def fails(*args: str) -> str:
    with pytest.raises(CommandError) as info:
        run(*args)
    message = str(info.value)
    assert "\n" not in message
    return message


@pytest.fixture
def names(manager: QueueManager, queue_name: str) -> Iterator[list[str]]:
    """Queues a test makes (the first is queue_name); dropped afterwards."""
    made = [queue_name]
    yield made
    for name in made:
        manager.drop_queue(name)


# -- Python API --------------------------------------------------------------------------


def test_create_queue_with_attributes_and_read_them_back(manager, names):
    q = names[0]
    names.append(q + "_dlq")
    manager.create_queue(
        q, deduplication_window=300, max_receive_count=3, dead_letter_queue=q + "_dlq"
    )
    assert manager.get_queue_attributes(q) == {
        "deduplication_window": 300,
        "max_receive_count": 3,
        "dead_letter_queue": q + "_dlq",
    }
    assert manager.set_queue_attributes(q, deduplication_window=None, paused=True) == {
        "max_receive_count": 3,
        "dead_letter_queue": q + "_dlq",
        "paused": True,
    }
    assert q + "_dlq" in [i.queue_name for i in manager.list_queues()]


def test_module_level_functions_use_the_default_database(manager, names):
    q = names[0]
    django_pgmq.create_queue(q, priorities=True)
    assert django_pgmq.get_queue_attributes(q) == {"priorities": True}
    assert django_pgmq.set_queue_attributes(q, priorities=None) == {}


def test_bad_attributes_raise_invalid_argument_naming_the_key(manager, queue):
    with pytest.raises(InvalidArgument, match='unknown queue attribute "colour"'):
        manager.set_queue_attributes(queue, colour="red")
    with pytest.raises(InvalidArgument, match='"max_message_size" must be an integer'):
        manager.set_queue_attributes(queue, max_message_size="big")
    with pytest.raises(QueueNotFound):
        manager.get_queue_attributes("no_such_queue_x")
    assert manager.get_queue_attributes(queue) == {}


def test_send_with_deduplication_id_and_priority(manager, queue):
    manager.set_queue_attributes(queue, deduplication_window=60, priorities=True)
    low = manager.send(queue, {"n": 1}, deduplication_id="a", priority=-1)
    assert manager.send(queue, {"n": 2}, deduplication_id="a") == low
    high = manager.send(queue, {"n": 3}, priority=7, headers={"trace": "x"})
    got = manager.read(queue, vt=30, qty=5)
    assert [m.msg_id for m in got] == [high, low]
    assert got[0].headers == {"trace": "x", "priority": 7}
    assert got[1].headers == {"deduplication_id": "a", "priority": -1}


@pytest.mark.parametrize(
    ("kwargs", "says"),
    [
        ({"priority": 101}, "priority must be between -100 and 100"),
        ({"priority": True}, "priority must be an integer"),
        ({"deduplication_id": ""}, "deduplication_id must be a string of 1 to 128"),
        ({"deduplication_id": 5}, "deduplication_id must be a string of 1 to 128"),
    ],
)
def test_send_refuses_bad_deduplication_ids_and_priorities(manager, queue, kwargs, says):
    with pytest.raises(InvalidArgument, match=says):
        manager.send(queue, {"n": 1}, **kwargs)


def test_pause_and_resume(manager, queue):
    manager.pause_queue(queue)
    msg_id = manager.send(queue, {"n": 1})
    assert manager.read(queue, vt=30, qty=5) == []
    assert manager.metrics(queue).queue_length == 1
    manager.resume_queue(queue)
    assert [m.msg_id for m in manager.read(queue, vt=30, qty=5)] == [msg_id]


def test_enforce_retention_and_redrive(manager, names):
    q, dlq = names[0], names[0] + "_dlq"
    names.append(dlq)
    manager.create_queue(q, max_receive_count=1, dead_letter_queue=dlq, message_retention=60)
    ids = manager.send_batch(q, [{"n": 1}, {"n": 2}])
    manager.read(q, vt=0, qty=2)
    assert manager.read(q, vt=0, qty=2) == []  # both moved
    assert manager.redrive(dlq, conditional={"n": 2}) == {q: 1}
    assert manager.redrive(dlq, limit=5) == {q: 1}
    back = manager.read(q, vt=0, qty=5)
    assert sorted(m.message["n"] for m in back) == [1, 2]
    assert all(m.msg_id not in ids for m in back)
    assert [(r.queue_name, r.expired) for r in manager.enforce_retention(q)] == [(q, 0)]


def test_async_twins(manager, queue):
    async def scenario() -> tuple[dict, dict]:
        return (
            await manager.aset_queue_attributes(queue, paused=True),
            await manager.aget_queue_attributes(queue),
        )

    assert asyncio.run(scenario()) == ({"paused": True}, {"paused": True})


# -- commands -----------------------------------------------------------------------------


@pytest.mark.parametrize("name", COMMANDS)
def test_the_commands_have_help_with_examples(name):
    parser = load_command_class("django_pgmq", name).create_parser("manage.py", name)
    text = parser.format_help()
    assert "examples:\n  manage.py " + name in text
    for action in parser._actions:
        assert action.help, f"{name}: {action.dest} has no help text"


def test_pgmq_create_sets_every_attribute_option(manager, names):
    q = names[0]
    names.append("orders_dlq_" + q[-6:])
    out = run(
        "pgmq_create", q, "--dedup-window", "300", "--max-receives", "5",
        "--dead-letter", names[1], "--retention", "14d", "--archive-retention", "30d",
        "--delay", "10", "--max-size", "256KiB", "--priorities",
    )  # fmt: skip
    assert out == f'queue "{q}" created\n'
    assert manager.get_queue_attributes(q) == {
        "deduplication_window": 300,
        "max_receive_count": 5,
        "dead_letter_queue": names[1],
        "message_retention": 14 * 86400,
        "archive_retention": 30 * 86400,
        "delivery_delay": 10,
        "max_message_size": 256 * 1024,
        "priorities": True,
    }


def test_pgmq_create_with_a_bad_attribute_creates_nothing(manager, queue_name):
    message = fails("pgmq_create", queue_name, "--max-receives", "3")
    assert '"max_receive_count" and "dead_letter_queue" go together' in message
    assert queue_name not in [i.queue_name for i in manager.list_queues()]
    assert "must be a duration" in fails("pgmq_create", queue_name, "--retention", "2 fortnights")
    assert "must be a size" in fails("pgmq_create", queue_name, "--max-size", "big")


def test_pgmq_attributes_shows_and_sets(manager, queue):
    assert run("pgmq_attributes", queue) == f'queue "{queue}" has no attributes\n'
    out = run(
        "pgmq_attributes", queue, "--set", "deduplication_window=5m", "--set", "paused=yes",
        "--set", "max_message_size=1KiB",
    )  # fmt: skip
    assert out.splitlines() == [
        "deduplication_window: 300",
        "max_message_size: 1024",
        "paused: true",
    ]
    assert run("pgmq_attributes", queue, "--set", "paused=").splitlines() == [
        "deduplication_window: 300",
        "max_message_size: 1024",
    ]
    assert 'unknown queue attribute "colour"' in fails(
        "pgmq_attributes", queue, "--set", "colour=red"
    )
    assert "must be KEY=VALUE" in fails("pgmq_attributes", queue, "--set", "paused")
    assert "does not exist" in fails("pgmq_attributes", "no_such_queue_y")


def test_pgmq_pause_and_resume(manager, queue):
    assert run("pgmq_pause", queue) == f'queue "{queue}" paused\n'
    manager.send(queue, {"n": 1})
    assert manager.read(queue, vt=30, qty=1) == []
    assert run("pgmq_resume", queue) == f'queue "{queue}" resumed\n'
    assert len(manager.read(queue, vt=30, qty=1)) == 1


def test_a_bad_option_value_is_one_line_without_a_traceback(subprocess_env, queue_name):
    done = subprocess.run(
        [sys.executable, "manage.py", "pgmq_create", queue_name, "--dedup-window", "soon"],
        cwd=ROOT, env=subprocess_env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 1
    assert "Traceback" not in done.stderr
    assert len(done.stderr.strip().splitlines()) == 1
    assert "must be a duration" in done.stderr


def test_pgmq_maintain_enforces_retention(manager, queue):
    manager.set_queue_attributes(queue, archive_retention=3600)
    out = run("pgmq_maintain")
    assert f'queue "{queue}": retention deleted 0 message(s) and 0 archived row(s)' in out


def test_a_worker_writes_its_max_receive_count_and_dead_letter_queue_as_attributes(manager, names):
    from django_pgmq.worker.config import plan

    q = names[0]
    names.append(q + "_dead")
    manager.create_queue(q)
    plan(
        [q],
        handler="tests.handlers.handle",
        overrides={"max_receive_count": 3, "dead_letter": q + "_dead"},
    )
    assert manager.get_queue_attributes(q) == {
        "max_receive_count": 3,
        "dead_letter_queue": q + "_dead",
    }
    plan([q], handler="tests.handlers.handle", overrides={"max_receive_count": 0})
    assert manager.get_queue_attributes(q) == {}


def test_delivery_delay_max_size_and_archive_retention_from_python(manager, queue):
    manager.set_queue_attributes(
        queue, delivery_delay=3600, max_message_size=30, archive_retention=60
    )
    later = manager.send(queue, {"n": 1})
    now = manager.send(queue, {"n": 2}, delay=timezone.now())
    assert [m.msg_id for m in manager.read(queue, vt=30, qty=5)] == [now]
    with pytest.raises(
        InvalidArgument, match="larger than the queue's max_message_size of 30"
    ) as info:
        manager.send_batch(queue, [{"n": 3}, {"big": "x" * 40}])
    assert str(info.value).count(f'"{queue}"') == 1, "the error names the queue once"
    assert manager.metrics(queue).queue_length == 2
    manager.archive(queue, [later, now])
    with connection.cursor() as cursor:
        cursor.execute(
            f"UPDATE pgmq.\"a_{queue}\" SET archived_at = now() - interval '2 minutes'"
            " WHERE msg_id = %s",
            [later],
        )
    [done] = manager.enforce_retention(queue)
    assert (done.queue_name, done.expired, done.archive_deleted) == (queue, 0, 1)
    assert manager.archive_count(queue) == 1
