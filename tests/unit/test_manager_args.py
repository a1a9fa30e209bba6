"""Bad arguments are refused by the queue manager before any SQL is sent.

These tests have no database access (pytest-django raises if one is attempted),
so passing them also proves the checks happen in Python first.
"""

from __future__ import annotations

import math
from datetime import datetime

import pytest

from django_pgmq import (
    InvalidArgument,
    InvalidPayload,
    InvalidQueueName,
    PgmqError,
    QueueManager,
)
from tests.unit.name_cases import INVALID_NAMES

Q = "orders"


@pytest.fixture
def qm() -> QueueManager:
    return QueueManager()


def test_unknown_alias_is_refused():
    with pytest.raises(InvalidArgument, match="'nowhere' is not in DATABASES"):
        QueueManager(using="nowhere")


@pytest.mark.parametrize(
    ("payload", "cause"),
    [
        ({1, 2}, "set"),
        (object(), "object"),
        (math.nan, "Out of range float"),
        ({"x": math.inf}, "Out of range float"),
    ],
    ids=["set", "object", "nan", "inf"],
)
def test_payload_not_json_serializable(qm, payload, cause):
    with pytest.raises(InvalidPayload, match=cause) as info:
        qm.send(Q, payload)
    assert f'queue "{Q}": message is not JSON-serializable' in str(info.value)


def test_none_message_is_refused(qm):
    with pytest.raises(InvalidPayload, match=r"JSON null \(None\) is not allowed as a message"):
        qm.send(Q, None)


def test_none_inside_a_batch_is_refused(qm):
    with pytest.raises(InvalidPayload, match=r"JSON null \(None\) is not allowed as a message"):
        qm.send_batch(Q, [{"a": 1}, None])


@pytest.mark.parametrize("headers", [["a"], "x=1", 5], ids=["list", "str", "int"])
def test_headers_must_be_a_dict(qm, headers):
    with pytest.raises(
        InvalidPayload, match=f"headers must be a dict, got {type(headers).__name__}"
    ):
        qm.send(Q, {"a": 1}, headers=headers)


def test_headers_not_serializable(qm):
    with pytest.raises(InvalidPayload, match="headers is not JSON-serializable"):
        qm.send(Q, {"a": 1}, headers={"k": {1, 2}})


@pytest.mark.parametrize(
    ("messages", "cause"),
    [([], "must not be empty"), ({"a": 1}, "must be a list"), ("abc", "must be a list")],
    ids=["empty", "dict", "str"],
)
def test_send_batch_needs_a_non_empty_list(qm, messages, cause):
    with pytest.raises(InvalidPayload, match=cause):
        qm.send_batch(Q, messages)


def test_send_batch_headers_length_must_match(qm):
    with pytest.raises(InvalidArgument, match="1 headers given for 2 messages"):
        qm.send_batch(Q, [{"a": 1}, {"a": 2}], headers=[{"h": 1}])


@pytest.mark.parametrize(
    ("call", "cause"),
    [
        (lambda qm: qm.send(Q, {}, delay=-1), "delay must be between 0"),
        (lambda qm: qm.send(Q, {}, delay=2**40), "delay must be between 0"),
        (lambda qm: qm.send(Q, {}, delay="5"), "delay must be an integer"),
        (lambda qm: qm.send(Q, {}, delay=datetime(2030, 1, 1)), "timezone-aware"),
        (lambda qm: qm.read(Q, vt=-1), "vt must be between 0"),
        (lambda qm: qm.read(Q, vt=10**12), "vt must be between 0"),
        (lambda qm: qm.read(Q, vt=1.5), "vt must be an integer"),
        (lambda qm: qm.read(Q, qty=0), "qty must be between 1"),
        (lambda qm: qm.read(Q, qty=-3), "qty must be between 1"),
        (lambda qm: qm.read(Q, qty=10**9), "qty must be between 1"),
        (lambda qm: qm.read(Q, qty=True), "qty must be an integer"),
        (lambda qm: qm.read(Q, conditional=[1]), "conditional must be a dict"),
        (lambda qm: qm.read_with_poll(Q, max_poll_seconds=-1), "max_poll_seconds"),
        (lambda qm: qm.read_with_poll(Q, poll_interval_ms=0), "poll_interval_ms"),
        (lambda qm: qm.pop(Q, qty=0), "qty must be between 1"),
        (lambda qm: qm.archive(Q, True), "msg_id must be an integer or a list"),
        (lambda qm: qm.archive(Q, "12"), "msg_id must be an integer or a list"),
        (lambda qm: qm.delete(Q, [1, "2"]), "msg_id must be an integer, got '2'"),
        (lambda qm: qm.delete(Q, [False]), "msg_id must be an integer, got False"),
        (lambda qm: qm.delete(Q, 0), "msg_id must be between 1"),
        (lambda qm: qm.set_vt(Q, 1, vt=-5), "vt must be between 0"),
        (lambda qm: qm.set_vt(Q, None, vt=5), "msg_id must be an integer or a list"),
    ],
)
def test_bad_arguments_name_the_cause(qm, call, cause):
    with pytest.raises(InvalidArgument, match=cause):
        call(qm)


@pytest.mark.parametrize("name", [n for _, n in INVALID_NAMES], ids=[i for i, _ in INVALID_NAMES])
@pytest.mark.parametrize(
    "method",
    ["create_queue", "drop_queue", "purge_queue", "send", "read", "pop", "metrics", "archive"],
)
def test_every_method_refuses_invalid_names(qm, method, name):
    args = {"send": ({},), "archive": (1,)}.get(method, ())
    with pytest.raises(InvalidQueueName):
        getattr(qm, method)(name, *args)


def test_all_errors_share_the_base_class():
    for cls in (InvalidArgument, InvalidPayload, InvalidQueueName):
        assert issubclass(cls, PgmqError)


@pytest.mark.parametrize(
    ("call", "named"),
    [
        (lambda m: m.read(Q, -5), "django_pgmq.read(queue, *, vt=30"),
        (lambda m: m.pop(Q, 1, 2), "django_pgmq.pop(queue, qty=1)"),
        (lambda m: m.send(Q), "django_pgmq.send(queue, message"),
        (lambda m: m.metrics(Q, bogus=1), "django_pgmq.metrics(queue)"),
    ],
    ids=["read-positional-vt", "pop-extra", "send-no-message", "metrics-unknown-keyword"],
)
def test_arguments_that_do_not_fit_a_module_function_are_an_invalid_argument(call, named):
    """Not a TypeError naming the internal ``MessageOps.read()``."""
    import django_pgmq

    with pytest.raises(InvalidArgument) as info:
        call(django_pgmq)
    assert named in str(info.value)
    assert "MessageOps" not in str(info.value)


def test_arguments_that_do_not_fit_a_manager_method_are_an_invalid_argument(qm):
    with pytest.raises(InvalidArgument, match=r"QueueManager\.read\(queue, \*, vt=30"):
        qm.read(Q, -5)
    with pytest.raises(InvalidArgument, match=r"QueueManager\.archive\(queue, msg_ids\)"):
        qm.archive(Q)
