"""The pgmq_* management commands: output, options and errors, on the real database."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from datetime import datetime
from io import StringIO
from pathlib import Path

import pytest
from django.core.management import call_command, load_command_class
from django.core.management.base import CommandError

import django_pgmq
from django_pgmq import QueueManager

ROOT = Path(__file__).resolve().parents[2]
# Every command of the app, found on disk: a new one is checked without being listed here.
COMMANDS = sorted(
    p.stem
    for p in (Path(django_pgmq.__file__).parent / "management" / "commands").glob("pgmq_*.py")
)
HOSTILE_NAMES = [
    "a'b",
    "a;b",
    "x--y",
    "a$b",
    'a"b',
    "a b",
    "-a",
    "x" * 48,
    "",
    "é",
    "naïve",
    "q_\u202e",
    "orders; DROP TABLE pgmq.meta",
]


def run(*args: str, stdin: str | None = None) -> tuple[str, str]:
    """Run a command in-process; return (stdout, stderr)."""
    out, err = StringIO(), StringIO()
    extra = {"stdin": StringIO(stdin)} if stdin is not None else {}
    call_command(*args, stdout=out, stderr=err, **extra)
    return out.getvalue(), err.getvalue()


def fails(*args: str, stdin: str | None = None) -> str:
    """Run a command that must fail; return its one-line error message."""
    with pytest.raises(CommandError) as info:
        run(*args, stdin=stdin)
    message = str(info.value)
    assert "\n" not in message
    return message


def json_lines(text: str) -> list[dict]:
    return [json.loads(line) for line in text.splitlines()]


@pytest.fixture
def created(manager: QueueManager) -> Iterator[list[str]]:
    """Names of queues a test creates through a command; dropped afterwards."""
    names: list[str] = []
    yield names
    for name in names:
        manager.drop_queue(name)


# -- help -------------------------------------------------------------------


@pytest.mark.parametrize("name", COMMANDS)
def test_every_command_and_option_has_help_with_examples(name):
    parser = load_command_class("django_pgmq", name).create_parser("manage.py", name)
    text = parser.format_help()
    assert "examples:\n  manage.py " + name in text
    for action in parser._actions:
        assert action.help, f"{name}: {action.dest} has no help text"
    assert "--database" in text


# -- pgmq_create / pgmq_drop / pgmq_list --------------------------------------


def test_create_creates_each_queue_and_says_which_existed(manager, queue, created):
    created.append("cmd_new")
    out, _ = run("pgmq_create", "cmd_new", queue)
    assert out.splitlines() == ['queue "cmd_new" created', f'queue "{queue}" already exists']
    info = {q.queue_name: q for q in manager.list_queues()}
    assert info["cmd_new"].is_unlogged is False
    assert manager.send("cmd_new", {"ok": True}) >= 1


def test_create_unlogged(manager, created):
    created.append("cmd_unlogged")
    run("pgmq_create", "cmd_unlogged", "--unlogged")
    [info] = [q for q in manager.list_queues() if q.queue_name == "cmd_unlogged"]
    assert info.is_unlogged is True


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_create_refuses_hostile_names_and_creates_none(manager, created, name):
    created.append("cmd_fine")
    message = fails("pgmq_create", "cmd_fine", "--", name)
    assert "queue name" in message
    assert [q.queue_name for q in manager.list_queues() if q.queue_name == "cmd_fine"] == []


def test_create_refuses_a_name_that_differs_only_in_case(queue):
    message = fails("pgmq_create", queue.upper())
    assert queue in message and "already uses" in message


def test_drop_drops_and_reports(manager, queue):
    manager.send(queue, {"n": 1})
    out, _ = run("pgmq_drop", queue)
    assert out.strip() == f'queue "{queue}" dropped'
    assert queue not in {q.queue_name for q in manager.list_queues()}


def test_drop_of_a_missing_queue_fails_and_drops_nothing(manager, queue):
    message = fails("pgmq_drop", queue, "cmd_missing")
    assert message == 'queue "cmd_missing" does not exist; nothing was dropped'
    assert queue in {q.queue_name for q in manager.list_queues()}


def test_drop_if_exists_skips_missing_queues(manager, queue):
    out, _ = run("pgmq_drop", "cmd_missing", queue, "--if-exists")
    assert out.splitlines() == ['queue "cmd_missing" does not exist', f'queue "{queue}" dropped']
    assert queue not in {q.queue_name for q in manager.list_queues()}


def test_list_table_and_json(manager, queue):
    out, _ = run("pgmq_list")
    header, rule, *rows = out.splitlines()
    assert header.split() == ["queue", "partitioned", "unlogged", "created", "at"]
    assert set(rule) == {"-", " "}
    [row] = [r.split() for r in rows if r.split()[0] == queue]
    assert row[1:3] == ["no", "no"]
    assert datetime.fromisoformat(row[3]).tzinfo is not None

    data = json.loads(run("pgmq_list", "--json")[0])
    [entry] = [q for q in data if q["queue_name"] == queue]
    assert entry["is_partitioned"] is False and entry["is_unlogged"] is False
    assert datetime.fromisoformat(entry["created_at"]) == row_created(manager, queue)


def row_created(manager: QueueManager, queue: str) -> datetime:
    return next(q.created_at for q in manager.list_queues() if q.queue_name == queue)


# -- pgmq_send ---------------------------------------------------------------


def test_send_prints_the_new_id(manager, queue):
    out, _ = run("pgmq_send", queue, '{"order": 42, "tags": ["a", "ü"]}')
    [message] = manager.read(queue, vt=30, qty=5)
    assert out.strip() == str(message.msg_id)
    assert message.message == {"order": 42, "tags": ["a", "ü"]}
    assert message.headers is None


@pytest.mark.parametrize("payload", ['"text"', "7", "[1, 2]", "true"])
def test_send_accepts_any_json_value(manager, queue, payload):
    run("pgmq_send", queue, payload)
    assert manager.read(queue, vt=30)[0].message == json.loads(payload)


def test_send_with_delay_and_headers(manager, queue):
    out, _ = run("pgmq_send", queue, "{}", "--delay", "3600", "--headers", '{"trace": "t1"}')
    assert manager.read(queue, vt=30) == []
    metrics = manager.metrics(queue)
    assert (metrics.queue_length, metrics.queue_visible_length) == (1, 0)
    [message] = manager.set_vt(queue, [int(out)], vt=0)
    assert message.headers == {"trace": "t1"}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["{"], "PAYLOAD is not valid JSON: Expecting property name"),
        (["not json"], "PAYLOAD is not valid JSON"),
        ([""], "PAYLOAD is empty"),
        (["   "], "PAYLOAD is empty"),
        (["null"], "JSON null (None) is not allowed as a message"),
        (["{}", "--headers", "[1]"], "--headers must be a JSON object, got list"),
        (["{}", "--headers", "{bad"], "--headers is not valid JSON"),
        (["{}", "--delay", "-1"], "delay must be between 0 and 2147483647, got -1"),
        (["{}", "--delay", str(10**12)], "delay must be between 0 and"),
        (["{}", "--delay", "soon"], "argument --delay: invalid int value: 'soon'"),
        (["{}", "--file", "x.jsonl"], "give either a PAYLOAD argument or --file PATH"),
        ([], "give either a PAYLOAD argument or --file PATH"),
    ],
)
def test_send_bad_input_sends_nothing(manager, queue, args, expected):
    assert expected in fails("pgmq_send", queue, *args)
    assert manager.metrics(queue).total_messages == 0


@pytest.mark.parametrize(
    "args",
    [
        ["--delay", "3600", "{}"],
        ["{}", "--delay", "3600"],
        ["--delay=3600", "{}"],
    ],
)
def test_send_takes_options_before_or_after_the_payload(manager, queue, args):
    out, _ = run("pgmq_send", queue, *args)
    [message] = manager.set_vt(queue, [int(out)], vt=0)
    assert message.message == {}
    assert manager.metrics(queue).total_messages == 1


def test_options_go_anywhere_in_other_commands_too(manager, queue):
    first, second = manager.send_batch(queue, [{"n": 1}, {"n": 2}])
    out, _ = run("pgmq_read", "--qty", "1", queue, "--vt", "0")
    assert [m["msg_id"] for m in json_lines(out)] == [first]
    out, _ = run("pgmq_archive", queue, "--database", "default", str(first), str(second))
    assert out.startswith(f'archived 2 message(s) in queue "{queue}"')


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--retention", "-1d"], "argument --retention: must be positive, got '-1d'"),
        (["--max-size", "-5KiB"], "argument --max-size: must be positive, got '-5KiB'"),
        (["--retention", "--unlogged"], "argument --retention: expected one argument"),
    ],
)
def test_create_refuses_negative_looking_values_by_name(manager, created, args, expected):
    created.append("cmd_negative")
    assert expected in fails("pgmq_create", "cmd_negative", *args)
    assert "cmd_negative" not in {q.queue_name for q in manager.list_queues()}


def test_a_task_backend_that_is_not_configured_is_named_with_the_known_ones(transactional_db):
    message = fails("pgmq_consume", "--tasks", "--backend", "nope")
    assert message == (
        "task backend 'nope' is not an alias of the TASKS setting (known: 'default', 'retrying')"
    )


def test_a_null_message_is_refused_in_the_admins_words(queue):
    from django import forms

    from django_pgmq.dashboard.forms import SendMessageForm

    with pytest.raises(forms.ValidationError) as admin:
        SendMessageForm.base_fields["message"].clean("null")
    [admin_text] = admin.value.messages
    command_text = fails("pgmq_send", queue, "null")
    assert admin_text == "JSON null is not allowed as a message."
    assert command_text == f'queue "{queue}": JSON null (None) is not allowed as a message'


def test_send_to_a_missing_queue(transactional_db):
    message = fails("pgmq_send", "cmd_missing", "{}")
    assert message == 'queue "cmd_missing" does not exist; create it first'


def test_send_file_in_chunks(manager, queue, tmp_path):
    path = tmp_path / "in.jsonl"
    path.write_text("".join(f'{{"n": {n}}}\n' for n in range(5)), encoding="utf-8")
    out, _ = run(
        "pgmq_send", queue, "--file", str(path), "--batch-size", "2", "--headers", '{"h": 1}'
    )
    ids = [int(line) for line in out.splitlines()]
    messages = manager.read(queue, vt=30, qty=10)
    assert ids == [m.msg_id for m in messages] == sorted(ids)
    assert [m.message for m in messages] == [{"n": n} for n in range(5)]
    assert {json.dumps(m.headers) for m in messages} == {'{"h": 1}'}


def test_send_file_from_stdin_with_delay(manager, queue):
    out, _ = run("pgmq_send", queue, "--file", "-", "--delay", "3600", stdin='"a"\n"b"\n')
    assert len(out.splitlines()) == 2
    metrics = manager.metrics(queue)
    assert (metrics.queue_length, metrics.queue_visible_length) == (2, 0)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"n": 1}\n{"n": 2}\n\n{"n": 4}\n', "line 3 is empty"),
        ('{"n": 1}\n   \n', "line 2 is empty"),
        ('{"n": 1}\n{"n": 2}\n{"n": 3\n', "line 3 is not valid JSON"),
        ('{"n": 1}\nnull\n', "line 2: queue"),
        ("", "the input has no lines"),
    ],
)
def test_send_file_bad_line_names_it_and_sends_nothing(manager, queue, text, expected):
    # --batch-size 1: the lines before the bad one were sent, then rolled back.
    message = fails("pgmq_send", queue, "--file", "-", "--batch-size", "1", stdin=text)
    assert expected in message
    assert manager.metrics(queue).queue_length == 0


def test_send_file_names_the_line_the_queue_refuses(manager, queue):
    """A message refused by max_message_size names its own line."""
    manager.set_queue_attributes(queue, max_message_size=30)
    lines = '{"n": 1}\n{"n": 2}\n{"text": "far too long for this queue"}\n{"n": 4}\n'
    message = fails("pgmq_send", queue, "--file", "-", stdin=lines)  # one chunk of 4
    assert message.startswith("line 3: ") and "max_message_size" in message
    assert manager.metrics(queue).queue_length == 0


def test_send_file_that_cannot_be_read(queue, tmp_path):
    message = fails("pgmq_send", queue, "--file", str(tmp_path / "missing.jsonl"))
    assert message == f"cannot read {tmp_path / 'missing.jsonl'}: No such file or directory"
    binary = tmp_path / "latin1.jsonl"
    binary.write_bytes(b'"caf\xe9"\n')
    assert "not UTF-8" in fails("pgmq_send", queue, "--file", str(binary))


def test_send_batch_size_must_be_positive(queue):
    message = fails("pgmq_send", queue, "--file", "-", "--batch-size", "0", stdin="1\n")
    assert "argument --batch-size: must be a positive integer, got '0'" in message


# -- pgmq_read / pgmq_pop -----------------------------------------------------


def test_read_prints_one_json_object_per_message(manager, queue):
    ids = manager.send_batch(queue, [{"n": 1}, {"n": 2}, {"n": 3}])
    out, _ = run("pgmq_read", queue, "--vt", "60", "--qty", "2")
    rows = json_lines(out)
    assert [r["msg_id"] for r in rows] == ids[:2]
    assert list(rows[0]) == [
        "msg_id",
        "read_ct",
        "enqueued_at",
        "last_read_at",
        "vt",
        "message",
        "headers",
    ]
    for row in rows:
        assert row["read_ct"] == 1
        vt, last_read = (
            datetime.fromisoformat(row["vt"]),
            datetime.fromisoformat(row["last_read_at"]),
        )
        assert vt.tzinfo is not None and (vt - last_read).total_seconds() == pytest.approx(60)
        assert datetime.fromisoformat(row["enqueued_at"]) <= last_read
    assert [m.msg_id for m in manager.read(queue, vt=30, qty=5)] == ids[2:]


def test_read_defaults_to_one_message_and_prints_nothing_when_empty(manager, queue):
    manager.send_batch(queue, [1, 2])
    assert len(json_lines(run("pgmq_read", queue)[0])) == 1
    assert len(json_lines(run("pgmq_read", queue)[0])) == 1
    assert run("pgmq_read", queue) == ("", "")


def test_read_conditional(manager, queue):
    manager.send_batch(queue, [{"kind": "a", "n": 1}, {"kind": "b", "n": 2}])
    out, _ = run("pgmq_read", queue, "--qty", "5", "--conditional", '{"kind": "b"}')
    assert [r["message"] for r in json_lines(out)] == [{"kind": "b", "n": 2}]


def test_read_wait_polls(manager, queue):
    assert run("pgmq_read", queue, "--wait", "0") == ("", "")
    manager.send(queue, {"n": 1})
    [row] = json_lines(run("pgmq_read", queue, "--wait", "1")[0])
    assert row["message"] == {"n": 1}


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--vt", "-1"], "vt must be between 0 and 2147483647, got -1"),
        (["--vt", str(10**12)], "vt must be between 0 and 2147483647"),
        (["--qty", "0"], "qty must be between 1 and"),
        (["--qty", "-3"], "qty must be between 1 and"),
        (["--qty", str(10**9)], "qty must be between 1 and 100000"),
        (["--vt", "abc"], "argument --vt: invalid int value: 'abc'"),
        (["--qty", "1.5"], "argument --qty: invalid int value: '1.5'"),
        (["--conditional", "[1]"], "--conditional must be a JSON object, got list"),
        (["--conditional", "{x"], "--conditional is not valid JSON"),
        (["--wait", "-1"], "max_poll_seconds must be between 0 and 3600"),
    ],
)
def test_read_bad_arguments_read_nothing(manager, queue, args, expected):
    manager.send(queue, {"n": 1})
    assert expected in fails("pgmq_read", queue, *args)
    assert manager.metrics(queue).queue_visible_length == 1


@pytest.mark.parametrize("command", ["pgmq_read", "pgmq_pop", "pgmq_purge", "pgmq_metrics"])
def test_missing_queue(command, transactional_db):
    assert fails(command, "cmd_missing") == 'queue "cmd_missing" does not exist; create it first'


@pytest.mark.parametrize(
    "command", ["pgmq_read", "pgmq_pop", "pgmq_purge", "pgmq_metrics", "pgmq_drop"]
)
def test_hostile_names_are_refused(command, transactional_db):
    for name in HOSTILE_NAMES:
        assert "queue name" in fails(command, "--", name), name


def test_pop_reads_and_deletes(manager, queue):
    ids = manager.send_batch(queue, [{"n": 1}, {"n": 2}, {"n": 3}])
    rows = json_lines(run("pgmq_pop", queue, "--qty", "2")[0])
    assert [r["msg_id"] for r in rows] == ids[:2]
    assert [r["message"] for r in rows] == [{"n": 1}, {"n": 2}]
    assert manager.metrics(queue).queue_length == 1
    assert manager.archive_count(queue) == 0
    assert [r["msg_id"] for r in json_lines(run("pgmq_pop", queue)[0])] == ids[2:]
    assert run("pgmq_pop", queue) == ("", "")


def test_pop_bad_qty(queue):
    assert "qty must be between 1 and" in fails("pgmq_pop", queue, "--qty", "0")


# -- pgmq_archive / pgmq_delete / pgmq_set_vt ----------------------------------


def test_archive_moves_messages_and_notes_missing_ids(manager, queue):
    ids = manager.send_batch(queue, [1, 2, 3])
    out, err = run("pgmq_archive", queue, str(ids[0]), str(ids[2]), "999")
    assert out.strip() == f'archived 2 message(s) in queue "{queue}": {ids[0]} {ids[2]}'
    assert err.strip() == f'not found in queue "{queue}": 999'
    assert manager.archive_count(queue) == 2
    assert [m.msg_id for m in manager.read(queue, vt=30, qty=5)] == [ids[1]]


def test_delete_removes_messages(manager, queue):
    ids = manager.send_batch(queue, [1, 2])
    out, err = run("pgmq_delete", queue, str(ids[1]))
    assert out.strip() == f'deleted 1 message(s) in queue "{queue}": {ids[1]}'
    assert err == ""
    assert manager.archive_count(queue) == 0
    assert [m.msg_id for m in manager.read(queue, vt=30, qty=5)] == [ids[0]]


@pytest.mark.parametrize("command", ["pgmq_archive", "pgmq_delete"])
def test_archive_and_delete_fail_when_no_id_exists(manager, queue, command):
    manager.send(queue, 1)
    assert fails(command, queue, "998", "999") == f'no such message in queue "{queue}": 998, 999'
    assert manager.metrics(queue).queue_length == 1


@pytest.mark.parametrize("command", ["pgmq_archive", "pgmq_delete", "pgmq_set_vt"])
@pytest.mark.parametrize(
    ("msg_id", "expected"),
    [
        ("abc", "argument MSG_ID: invalid int value: 'abc'"),
        ("1.0", "argument MSG_ID: invalid int value: '1.0'"),
        ("-5", "msg_id must be between 1 and"),
        ("0", "msg_id must be between 1 and"),
        (str(2**63), "msg_id must be between 1 and"),
    ],
)
def test_bad_message_ids(manager, queue, command, msg_id, expected):
    manager.send(queue, 1)
    vt = ["--vt", "0"] if command == "pgmq_set_vt" else []
    assert expected in fails(command, queue, "1", msg_id, *vt)
    assert manager.metrics(queue).queue_length == 1


def test_set_vt_releases_and_hides(manager, queue):
    [msg_id] = manager.send_batch(queue, [{"n": 1}])
    manager.read(queue, vt=3600)
    [row] = json_lines(run("pgmq_set_vt", queue, str(msg_id), "--vt", "0")[0])
    assert row["msg_id"] == msg_id and row["message"] == {"n": 1}
    assert [m.msg_id for m in manager.read(queue, vt=0)] == [msg_id]
    out, err = run("pgmq_set_vt", queue, str(msg_id), "777", "--vt", "3600")
    assert [r["msg_id"] for r in json_lines(out)] == [msg_id]
    assert err.strip() == f'not found in queue "{queue}": 777'
    assert manager.read(queue, vt=30) == []


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["1"], "the following arguments are required: --vt"),
        (["1", "--vt", "-5"], "vt must be between 0 and"),
        (["777", "--vt", "0"], "no such message in queue"),
    ],
)
def test_set_vt_errors(queue, args, expected):
    assert expected in fails("pgmq_set_vt", queue, *args)


# -- pgmq_purge / pgmq_metrics -------------------------------------------------


def test_purge_prints_the_count(manager, queue):
    manager.send_batch(queue, [1, 2, 3])
    manager.archive(queue, 1)
    out, _ = run("pgmq_purge", queue)
    assert out.strip() == f'purged 2 message(s) from queue "{queue}"'
    assert manager.metrics(queue).queue_length == 0
    assert manager.archive_count(queue) == 1


def metrics_rows(text: str) -> dict[str, list[str]]:
    header, rule, *rows = text.splitlines()
    assert header.split("  ")[0] == "queue"
    assert len(rule) == len(header)
    return {row.split()[0]: row.split()[1:] for row in rows}


def test_metrics_table(manager, queue, created):
    created.append("cmd_empty")
    manager.create_queue("cmd_empty")
    manager.send_batch(queue, [1, 2, 3])
    manager.read(queue, vt=3600)
    rows = metrics_rows(run("pgmq_metrics")[0])
    length, visible, newest, oldest, total = rows[queue]
    assert (length, visible, total) == ("3", "2", "3")
    assert newest.endswith("s") and oldest.endswith("s")
    assert rows["cmd_empty"] == ["0", "0", "-", "-", "0"]
    assert list(metrics_rows(run("pgmq_metrics", "cmd_empty")[0])) == ["cmd_empty"]


def test_metrics_json(manager, queue):
    manager.send_batch(queue, [1, 2])
    [entry] = json.loads(run("pgmq_metrics", queue, "--json")[0])
    assert entry["queue_name"] == queue
    assert (entry["queue_length"], entry["queue_visible_length"], entry["total_messages"]) == (
        2,
        2,
        2,
    )
    assert isinstance(entry["oldest_msg_age_sec"], int)
    assert datetime.fromisoformat(entry["scrape_time"]).tzinfo is not None
    all_queues = json.loads(run("pgmq_metrics", "--json")[0])
    assert queue in {e["queue_name"] for e in all_queues}


@pytest.fixture
def many_queues(manager: QueueManager) -> Iterator[list[str]]:
    """101 more queues than the database had, one more than pgmq_metrics shows at once."""
    names = [f"cmd_page_{n:03d}" for n in range(101)]
    for name in names:
        manager.create_queue(name)
    manager.send_batch(names[1], [1, 2])
    yield names
    for name in names:
        manager.drop_queue(name)


def metrics_names(text: str) -> list[str]:
    return [row.split()[0] for row in text.splitlines()[2:]]


def test_metrics_pages_by_name(manager, many_queues):
    names = [q.queue_name for q in manager.list_queues()]
    total = len(names)
    out, err = run("pgmq_metrics")
    assert metrics_names(out) == names[:100]
    assert err.strip() == (
        f"queues 1-100 of {total:,} shown (by name); {total - 100:,} more: --offset 100, or --all"
    )
    at = names.index("cmd_page_001")
    out, err = run("pgmq_metrics", "--offset", str(at), "--limit", "2")
    rows = metrics_rows(out)
    assert list(rows) == ["cmd_page_001", "cmd_page_002"]
    assert (rows["cmd_page_001"][0], rows["cmd_page_001"][-1]) == ("2", "2")
    assert err.startswith(f"queues {at + 1:,}-{at + 2:,} of {total:,} shown (by name)")
    out, err = run("pgmq_metrics", "--offset", str(total - 1))
    assert (metrics_names(out), err.strip()) == (
        names[-1:],
        f"queues {total:,}-{total:,} of {total:,} shown (by name), or --all",
    )
    out, err = run("pgmq_metrics", "--all")
    assert (metrics_names(out), err) == (names, "")
    out, err = run("pgmq_metrics", "--offset", str(total))
    assert (out.strip(), err.strip()) == (
        "no queues",
        f"no queues at --offset {total}: there are {total:,}",
    )


def test_metrics_json_pages_too(manager, many_queues):
    names = [q.queue_name for q in manager.list_queues()]
    at = names.index("cmd_page_000")
    out, err = run("pgmq_metrics", "--json", "--offset", str(at), "--limit", "3")
    entries = json.loads(out)
    assert [e["queue_name"] for e in entries] == many_queues[:3]
    assert entries[1]["queue_length"] == 2
    assert err.startswith(f"queues {at + 1:,}-{at + 3:,} of")
    assert len(json.loads(run("pgmq_metrics", "--json")[0])) == 100
    everything = json.loads(run("pgmq_metrics", "--json", "--all")[0])
    assert [e["queue_name"] for e in everything] == names


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--limit", "0"], "argument --limit: must be a positive integer, got '0'"),
        (["--limit", "ten"], "argument --limit: must be a positive integer, got 'ten'"),
        (["--offset", "-1"], "argument --offset: must be a non-negative integer, got '-1'"),
        (["--offset", "1.5"], "argument --offset: must be a non-negative integer, got '1.5'"),
        (["--all", "--limit", "5"], "argument --limit: not allowed with argument --all"),
        (["cmd_x", "--limit", "5"], "cannot be combined with QUEUE names"),
        (["cmd_x", "--all"], "cannot be combined with QUEUE names"),
        (["cmd_x", "--offset", "0"], "cannot be combined with QUEUE names"),
    ],
)
def test_metrics_paging_errors(args, expected, transactional_db):
    assert expected in fails("pgmq_metrics", *args)


# -- --database --------------------------------------------------------------


@pytest.mark.django_db(transaction=True, databases=["default", "other"])
def test_database_option_uses_that_alias():
    default, other = QueueManager("default"), QueueManager("other")
    try:
        run("pgmq_create", "cmd_other", "--database", "other")
        run("pgmq_send", "cmd_other", '{"where": "other"}', "--database", "other")
        assert "cmd_other" not in {q.queue_name for q in default.list_queues()}
        assert other.read("cmd_other", vt=30)[0].message == {"where": "other"}
        assert fails("pgmq_purge", "cmd_other").endswith("does not exist; create it first")
    finally:
        other.drop_queue("cmd_other")


def test_unknown_database_alias(transactional_db):
    assert fails("pgmq_list", "--database", "nope") == "database alias 'nope' is not in DATABASES"


# -- as a real process: exit status and one-line errors -------------------------


def manage(
    env: dict[str, str], *args: str, stdin: str | None = None
) -> subprocess.CompletedProcess:
    """Run ``manage.py`` in a subprocess of the example project."""
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
    )


def assert_one_line_error(result: subprocess.CompletedProcess, expected: str) -> None:
    assert result.returncode == 1, result.stderr
    assert result.stdout == ""
    assert "Traceback" not in result.stderr
    [line] = result.stderr.splitlines()
    assert line.startswith("CommandError: ") and expected in line


@pytest.mark.slow
def test_process_success_and_errors(manager, queue, subprocess_env):
    ok = manage(subprocess_env, "pgmq_send", queue, "--file", "-", stdin='{"n": 1}\n{"n": 2}\n')
    assert ok.returncode == 0, ok.stderr
    assert [int(i) for i in ok.stdout.split()] == [
        m.msg_id for m in manager.read(queue, vt=30, qty=5)
    ]
    cases = [
        (["pgmq_send", "a';DROP TABLE pgmq.meta;--", "{}"], "queue name contains invalid"),
        (["pgmq_create", "x" * 48], "queue name is too long"),
        (["pgmq_read", queue, "--vt", "abc"], "argument --vt: invalid int value: 'abc'"),
        (["pgmq_read", queue, "--qty", "-1"], "qty must be between 1 and"),
        (["pgmq_archive", queue, "not-an-id"], "argument MSG_ID: invalid int value"),
        (["pgmq_archive", queue, "999999"], f'no such message in queue "{queue}"'),
        (["pgmq_send", queue, "{oops"], "PAYLOAD is not valid JSON"),
        (["pgmq_read", "cmd_missing"], 'queue "cmd_missing" does not exist'),
        (["pgmq_send", queue], "give either a PAYLOAD argument or --file PATH"),
        (["pgmq_list", "--bogus"], "unrecognized arguments: --bogus"),
        (["pgmq_create", "x", "--retention", "-1d"], "--retention: must be positive"),
        (["pgmq_schedule", "bogus"], "argument ACTION: invalid choice: 'bogus'"),
        (["pgmq_schedule", "add", "n"], "the following arguments are required: CRON, QUEUE"),
        (["pgmq_schedule", "add", "n", "* * * * *", queue, "--catch-up", "x"], "--catch-up"),
        (["pgmq_schedule", "remove", "cmd_no_such_schedule"], "does not exist"),
    ]
    for args, expected in cases:
        assert_one_line_error(manage(subprocess_env, *args), expected)
    assert manager.metrics(queue).total_messages == 2
    assert "pgmq.meta" not in {q.queue_name for q in manager.list_queues()}


@pytest.mark.slow
def test_process_database_unreachable_is_one_line(subprocess_env, transactional_db):
    url = subprocess_env["DATABASE_URL"].rsplit("/", 1)[0] + "/cmd_no_such_database"
    result = manage({**subprocess_env, "DATABASE_URL": url}, "pgmq_list")
    assert_one_line_error(result, "database error: ")
    assert "cmd_no_such_database" in result.stderr
