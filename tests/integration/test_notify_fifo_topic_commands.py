"""Manager methods and commands for notifications, FIFO groups, topics and partitions."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from io import StringIO

import pytest
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError

from django_pgmq import (
    InvalidArgument,
    InvalidPayload,
    InvalidQueueName,
    QueueManager,
    QueueNotFound,
)
from django_pgmq.manager.partition_ops import interval_text

NEW_COMMANDS = ["pgmq_notify", "pgmq_bind", "pgmq_unbind", "pgmq_send_topic", "pgmq_maintain"]


def run(*args: str) -> tuple[str, str]:
    out, err = StringIO(), StringIO()
    call_command(*args, stdout=out, stderr=err)
    return out.getvalue(), err.getvalue()


def fails(*args: str) -> str:
    with pytest.raises(CommandError) as info:
        run(*args)
    assert "\n" not in str(info.value)
    return str(info.value)


@pytest.fixture
def make_queue(manager: QueueManager) -> Iterator[Callable[..., str]]:
    made: list[str] = []

    def make(prefix: str = "c_") -> str:
        name = f"{prefix}{uuid.uuid4().hex[:12]}"
        manager.create_queue(name)
        made.append(name)
        return name

    yield make
    for name in made:
        manager.drop_queue(name)


@pytest.fixture
def created(manager: QueueManager) -> Iterator[list[str]]:
    """Queues a test creates through a command; dropped afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        manager.drop_queue(name)


@pytest.fixture
def key() -> Callable[[str], str]:
    prefix = f"k{uuid.uuid4().hex[:10]}"
    return lambda rest="": f"{prefix}.{rest}" if rest else prefix


def throttle_of(manager: QueueManager, queue: str) -> int | None:
    found = [
        t.throttle_interval_ms for t in manager.list_notify_throttles() if t.queue_name == queue
    ]
    return found[0] if found else None


@pytest.mark.parametrize("name", NEW_COMMANDS)
def test_new_commands_have_help_with_examples(name):
    parser = load_command_class("django_pgmq", name).create_parser("manage.py", name)
    text = parser.format_help()
    assert "examples:\n  manage.py " + name in text
    assert all(action.help for action in parser._actions)


# -- notifications ----------------------------------------------------------------


def test_manager_notify_methods(manager, make_queue):
    queue = make_queue("Mixed_")
    manager.enable_notify(queue)
    assert throttle_of(manager, queue) == 250
    manager.update_notify(queue.lower(), 0)
    assert throttle_of(manager, queue) == 0
    assert manager.notify_channel(queue.lower()) == f"pgmq.q_{queue}.INSERT"
    manager.disable_notify(queue)
    assert throttle_of(manager, queue) is None
    manager.disable_notify(queue)  # already off: a no-op


def test_manager_notify_bad_input(manager, make_queue):
    queue = make_queue()
    with pytest.raises(InvalidArgument, match="does not have notify_insert enabled"):
        manager.update_notify(queue, 10)
    with pytest.raises(InvalidArgument, match="throttle_ms must be between 0"):
        manager.enable_notify(queue, -1)
    with pytest.raises(InvalidArgument, match="throttle_ms must be an integer"):
        manager.update_notify(queue, "10")
    with pytest.raises(QueueNotFound):
        manager.enable_notify("c_missing_queue")
    with pytest.raises(InvalidQueueName):
        manager.notify_channel("bad;name")


def test_pgmq_notify_enable_throttle_show_list_disable(manager, make_queue):
    queue = make_queue()
    out, _ = run("pgmq_notify", queue)
    assert out == f'queue "{queue}": notifications off (channel pgmq.q_{queue}.INSERT)\n'
    out, _ = run("pgmq_notify", queue, "--enable", "--throttle", "0")
    assert out.strip().endswith(
        "notifications on, throttle 0 ms, channel " + f"pgmq.q_{queue}.INSERT"
    )
    assert throttle_of(manager, queue) == 0
    run("pgmq_notify", queue, "--throttle", "75")
    assert throttle_of(manager, queue) == 75
    out, _ = run("pgmq_notify")
    assert any(line.split()[:2] == [queue, "75"] for line in out.splitlines())
    run("pgmq_notify", queue, "--disable")
    assert throttle_of(manager, queue) is None


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["--enable", "--disable"], "not allowed with argument"),
        (["--disable", "--throttle", "5"], "--throttle goes with --enable, not --disable"),
        (["--throttle", "-5"], "must be milliseconds (0 or more), got '-5'"),
        (["--throttle", "5"], "does not have notify_insert enabled"),
    ],
)
def test_pgmq_notify_bad_input(make_queue, args, text):
    assert text in fails("pgmq_notify", make_queue(), *args)


def test_pgmq_notify_needs_a_queue_to_change_and_an_existing_one(transactional_db):
    assert fails("pgmq_notify", "--enable") == "give the QUEUE to change"
    assert "does not exist" in fails("pgmq_notify", "c_missing_queue", "--enable")
    assert "queue name" in fails("pgmq_notify", "bad;name")


# -- FIFO groups ----------------------------------------------------------------------


def send_groups(manager: QueueManager, queue: str) -> list[int]:
    return manager.send_batch(
        queue,
        [{"n": n} for n in range(5)],
        headers=[{"x-pgmq-group": g} for g in ["a", "a", "b", "b", "c"]],
    )


@pytest.mark.parametrize(
    ("mode", "expected"), [("fifo", [0, 1, 2, 3]), ("rr", [0, 2, 4, 1]), ("head", [0, 2, 4])]
)
def test_manager_read_grouped_modes(manager, make_queue, mode, expected):
    queue = make_queue()
    send_groups(manager, queue)
    assert [m.message["n"] for m in manager.read_grouped(queue, 30, 4, mode)] == expected


def test_manager_read_grouped_with_poll_and_bad_input(manager, make_queue):
    queue = make_queue()
    assert manager.read_grouped_with_poll(queue, 30, 2, "rr", max_poll_seconds=0) == []
    send_groups(manager, queue)
    got = manager.read_grouped_with_poll(queue, 30, 2, "head", max_poll_seconds=1)
    assert [m.message["n"] for m in got] == [0, 2]
    with pytest.raises(InvalidArgument, match="mode must be one of 'fifo', 'rr', 'head'"):
        manager.read_grouped(queue, 30, 1, "lifo")
    with pytest.raises(InvalidArgument, match="qty must be between 1"):
        manager.read_grouped(queue, 30, 0)
    with pytest.raises(InvalidArgument, match="max_poll_seconds must be between 0 and 3600"):
        manager.read_grouped_with_poll(queue, max_poll_seconds=-1)
    with pytest.raises(QueueNotFound):
        manager.read_grouped("c_missing_queue")


def test_pgmq_read_group_mode(manager, make_queue):
    queue = make_queue()
    send_groups(manager, queue)
    out, _ = run("pgmq_read", queue, "--group-mode", "rr", "--qty", "3")
    assert [json.loads(line)["message"]["n"] for line in out.splitlines()] == [0, 2, 4]
    out, _ = run("pgmq_read", queue, "--group-mode", "fifo", "--qty", "3", "--wait", "0")
    assert out == ""  # every group's head is in flight
    assert "invalid choice: 'lifo'" in fails("pgmq_read", queue, "--group-mode", "lifo")
    assert "--conditional does not go with --group-mode" in fails(
        "pgmq_read", queue, "--group-mode", "head", "--conditional", "{}"
    )


# -- topics ------------------------------------------------------------------------------


def test_manager_topic_methods(manager, make_queue, key):
    audit, every = make_queue(), make_queue()
    manager.bind_topic(key("*"), audit)
    manager.bind_topic(key("*"), audit)  # twice: one binding
    manager.bind_topic(key("#"), every)
    assert sorted(
        (b.pattern, b.queue_name)
        for b in manager.list_topic_bindings()
        if b.queue_name in (audit, every)
    ) == [(key("#"), every), (key("*"), audit)]
    assert [b.pattern for b in manager.list_topic_bindings(audit)] == [key("*")]
    assert {r.queue_name for r in manager.test_routing(key("eu.created"))} == {every}
    assert manager.send_topic(key("created"), {"id": 1}, headers={"h": 1}) == 2
    assert manager.read(audit)[0].headers == {"h": 1}
    delivered = manager.send_batch_topic(key("x"), [{"n": 1}, {"n": 2}], delay=0)
    assert sorted(d.queue_name for d in delivered) == sorted([audit, audit, every, every])
    at = datetime.now(UTC) + timedelta(hours=1)
    later = manager.send_batch_topic(key("y"), [{"n": 3}], headers=[{"h": 2}], delay=at)
    assert len(later) == 2
    assert manager.unbind_topic(key("*"), audit) is True
    assert manager.unbind_topic(key("*"), audit) is False
    assert manager.send_topic(key("z.z"), {"id": 2}) == 1


def test_manager_topic_bad_input(manager, make_queue, key):
    queue = make_queue()
    with pytest.raises(InvalidArgument, match="consecutive stars"):
        manager.bind_topic(key("**"), queue)
    with pytest.raises(InvalidArgument, match="routing_key cannot be NULL or empty"):
        manager.send_topic("", {"x": 1})
    with pytest.raises(InvalidArgument, match="routing_key must be a string"):
        manager.send_topic(None, {"x": 1})
    with pytest.raises(
        InvalidPayload,
        match=rf'routing key "{key()}": JSON null \(None\) is not allowed as a message',
    ):
        manager.send_topic(key(), None)
    with pytest.raises(InvalidPayload, match="headers must be a dict"):
        manager.send_topic(key(), {"x": 1}, headers=["h"])
    with pytest.raises(InvalidPayload, match="message is not JSON-serializable"):
        manager.send_batch_topic(key(), [{1, 2}])
    with pytest.raises(InvalidArgument, match="1 headers given for 2 messages"):
        manager.send_batch_topic(key(), [1, 2], headers=[{}])
    with pytest.raises(InvalidArgument, match="msgs cannot be NULL or empty"):
        manager.send_batch_topic(key(), [])
    with pytest.raises(QueueNotFound):
        manager.bind_topic(key("*"), "c_missing_queue")
    with pytest.raises(InvalidQueueName):
        manager.unbind_topic(key("*"), "bad;name")


def test_pgmq_bind_unbind_send_topic(manager, make_queue, key):
    queue = make_queue()
    out, _ = run("pgmq_bind", key("*"), queue)
    assert out == f'bound pattern "{key("*")}" to queue "{queue}"\n'
    out, _ = run("pgmq_bind", "--list", "--queue", queue)
    assert out.splitlines()[2].split()[:2] == [key("*"), queue]
    out, _ = run("pgmq_send_topic", key("a"), "--dry-run")
    assert out == f"{queue}\t{key('*')}\n"
    out, _ = run("pgmq_send_topic", key("a"), '{"id": 7}', "--headers", '{"t": 1}')
    [(sent_to, msg_id)] = [line.split("\t") for line in out.splitlines()]
    assert sent_to == queue
    [message] = manager.read(queue)
    assert (message.msg_id, message.message, message.headers) == (int(msg_id), {"id": 7}, {"t": 1})
    out, err = run("pgmq_send_topic", key("a.b"), "1")
    assert out == "" and "nothing sent" in err
    out, _ = run("pgmq_unbind", key("*"), queue)
    assert out == f'unbound pattern "{key("*")}" from queue "{queue}"\n'
    assert fails("pgmq_unbind", key("*"), queue) == (
        f'pattern "{key("*")}" is not bound to queue "{queue}"'
    )


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["pgmq_bind", "a.**", "{queue}"], "consecutive stars"),
        (["pgmq_bind", "a.*"], "give PATTERN and QUEUE (or --list)"),
        (["pgmq_bind", "a.*", "{queue}", "--list"], "--list takes no PATTERN or QUEUE"),
        (["pgmq_bind", "a.*", "c_missing_queue"], "does not exist"),
        (["pgmq_send_topic", "a..b", "1"], "cannot contain consecutive dots"),
        (["pgmq_send_topic", "a.b"], "PAYLOAD is empty"),
        (["pgmq_send_topic", "a.b", "{{x"], "PAYLOAD is not valid JSON"),
        (["pgmq_send_topic", "a.b", "1", "--headers", "[1]"], "--headers must be a JSON object"),
        (["pgmq_send_topic", "a.b", "1", "--delay", "-1"], "delay must be between 0"),
        (["pgmq_unbind", "a.*", "bad;name"], "queue name"),
    ],
)
def test_topic_commands_bad_input(make_queue, args, text):
    queue = make_queue()
    assert text in fails(*[a.format(queue=queue) for a in args])


# -- partitioned queues ---------------------------------------------------------------------


def test_interval_text():
    assert interval_text("x", 10) == "10"
    assert interval_text("x", " 1 day ") == "1 day"
    assert interval_text("x", timedelta(days=2)) == "2 days"
    assert interval_text("x", timedelta(hours=6)) == "0 days 21600 seconds 0 microseconds"
    assert interval_text("x", None, optional=True) is None
    for bad in (0, -5, True, "", "  ", None, 1.5, timedelta(0)):
        with pytest.raises(InvalidArgument):
            interval_text("x", bad)


def test_manager_partition_methods(manager, created):
    queue = f"c_{uuid.uuid4().hex[:12]}"
    created.append(queue)
    manager.create_partitioned_queue(queue, timedelta(hours=6), timedelta(days=2), premake=1)
    assert queue in manager.partitioned_queues()
    parts = manager.list_partitions(queue)
    assert [p.partitioned_table for p in parts] == [f"q_{queue}"] * 3 + [f"a_{queue}"] * 3
    assert [p.is_default for p in parts[:3]] == [False, False, True]
    assert manager.maintain_partitions(queue, lock_timeout=1.5) == []
    manager.send(queue, {"n": 1})
    assert manager.metrics(queue).default_partition_length == 0


def test_manager_partition_bad_input(manager, make_queue):
    queue = make_queue()
    with pytest.raises(InvalidArgument, match="premake must be between 1 and 1000"):
        manager.create_partitioned_queue("c_new_queue", premake=0)
    with pytest.raises(InvalidArgument, match="partition_interval must be a positive integer"):
        manager.create_partitioned_queue("c_new_queue", partition_interval="soon")
    with pytest.raises(InvalidArgument, match="retention_interval must be a time interval"):
        manager.create_partitioned_queue("c_new_queue", "1 day", 100)
    with pytest.raises(InvalidArgument, match="lock_timeout must be 0-3600 seconds"):
        manager.maintain_partitions(queue, lock_timeout=0)
    with pytest.raises(InvalidArgument, match="is not partitioned"):
        manager.maintain_partitions(queue)
    with pytest.raises(QueueNotFound):
        manager.list_partitions("c_missing_queue")
    with pytest.raises(InvalidArgument, match="leading_partition must be between 1 and 1000"):
        manager.convert_archive_partitioned(queue, leading_partition=0)
    assert "c_new_queue" not in [q.queue_name for q in manager.list_queues()]


def test_pgmq_create_notify_and_partitioned(manager, created):
    plain, parted = (f"c_{uuid.uuid4().hex[:12]}" for _ in range(2))
    created += [plain, parted]
    out, _ = run("pgmq_create", plain, "--notify", "--throttle", "40")
    assert out == f'queue "{plain}" created\n'
    assert throttle_of(manager, plain) == 40
    run(
        "pgmq_create",
        parted,
        "--partitioned",
        "--partition-interval",
        "1 hour",
        "--retention-interval",
        "none",
        "--premake",
        "2",
        "--notify",
    )
    assert throttle_of(manager, parted) == 250
    [info] = [q for q in manager.list_queues() if q.queue_name == parted]
    assert info.is_partitioned
    assert len([p for p in manager.list_partitions(parted) if p.partitioned_table[0] == "q"]) == 4


@pytest.mark.parametrize(
    ("args", "text"),
    [
        (["--throttle", "5"], "--throttle goes with --notify"),
        (["--premake", "2"], "--premake: only with --partitioned"),
        (["--partitioned", "--unlogged"], "--partitioned and --unlogged do not go together"),
        (["--partitioned", "--premake", "0"], "must be a positive integer"),
        (["--partitioned", "--partition-interval", "0"], "partition_interval must be a positive"),
        (["--notify", "--throttle", "x"], "must be milliseconds"),
    ],
)
def test_pgmq_create_bad_options_create_nothing(manager, args, text):
    name = f"c_{uuid.uuid4().hex[:12]}"
    assert text in fails("pgmq_create", name, *args)
    assert name not in [q.queue_name for q in manager.list_queues()]


def test_pgmq_maintain(manager, created):
    queue = f"c_{uuid.uuid4().hex[:12]}"
    created.append(queue)
    manager.create_partitioned_queue(queue, 10, 20, premake=1)
    manager.send_batch(queue, [{"n": n} for n in range(35)])
    out, _ = run("pgmq_maintain", queue, "--lock-timeout", "2")
    assert f'queue "{queue}": created q_{queue}_p20 [20, 30), 10 row(s) moved in' in out
    assert f'queue "{queue}": dropped q_{queue}_p0 [0, 10)' in out
    out, _ = run("pgmq_maintain", queue)
    assert out == f'queue "{queue}": partitions up to date\n'
    out, _ = run("pgmq_maintain", "-v", "0")
    assert out == ""
    out, _ = run("pgmq_maintain", "--list", queue)
    assert f"q_{queue}_default  DEFAULT" in out


def test_pgmq_maintain_reports_failures_and_goes_on(manager, make_queue, created):
    plain = make_queue()
    queue = f"c_{uuid.uuid4().hex[:12]}"
    created.append(queue)
    manager.create_partitioned_queue(queue, 10, 100, premake=1)
    out = StringIO()
    err = StringIO()
    with pytest.raises(CommandError) as info:
        call_command("pgmq_maintain", plain, queue, stdout=out, stderr=err)
    assert str(info.value) == f'1 queue(s) not maintained: "{plain}"'
    assert "is not partitioned" in err.getvalue()
    assert f'queue "{queue}": partitions up to date' in out.getvalue()
    assert "must be more than 0" in fails("pgmq_maintain", "--lock-timeout", "0")
    assert "queue name" in fails("pgmq_maintain", "bad;name")
