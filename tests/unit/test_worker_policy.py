"""Worker policies without a database: backoff, giving up, wake-up schedule, settings."""

from __future__ import annotations

import re
import threading
import time
from types import SimpleNamespace

import pytest
from django.core.exceptions import ImproperlyConfigured

from django_pgmq.errors import InvalidArgument, InvalidQueueName
from django_pgmq.worker import registry, retry
from django_pgmq.worker.config import resolve
from django_pgmq.worker.registry import Consumer, consumer
from django_pgmq.worker.schedule import Schedule


def handler(message):
    pass


# -- backoff ---------------------------------------------------------------------


@pytest.mark.parametrize(("read_ct", "full"), [(1, 1.0), (2, 2.0), (3, 4.0), (7, 60.0)])
def test_backoff_doubles_per_read_up_to_the_cap_with_jitter_in_its_upper_half(read_ct, full):
    assert retry.backoff(read_ct, 1.0, rand=lambda: 0.0) == full / 2
    assert retry.backoff(read_ct, 1.0, rand=lambda: 1.0) == full


def test_backoff_of_a_message_read_very_often_stays_at_the_cap():
    assert retry.backoff(10_000, 0.5, rand=lambda: 1.0) == retry.MAX_DELAY


@pytest.mark.parametrize(("read_ct", "full"), [(1, 2.0), (2, 3.0), (9, 3.0)])
def test_backoff_stops_doubling_at_the_cap_it_is_given(read_ct, full):
    assert retry.backoff(read_ct, 2.0, cap=3.0, rand=lambda: 1.0) == full
    assert retry.backoff(read_ct, 2.0, cap=3.0, rand=lambda: 0.0) == full / 2


def test_a_cap_below_the_first_delay_keeps_the_first_delay():
    """retry_delay 120 with the default cap (60 s): 120 s every time, never cut to 60."""
    assert [retry.backoff(n, 120.0, rand=lambda: 1.0) for n in (1, 2, 30)] == [120.0] * 3


def test_a_message_is_exhausted_when_read_max_receive_count_times_and_never_with_zero():
    assert not retry.exhausted(2, 3)
    assert retry.exhausted(3, 3)
    assert not retry.exhausted(1_000, 0)


def test_a_message_read_past_max_receive_count_was_never_settled():
    assert not retry.unsettled_too_often(3, 3)
    assert retry.unsettled_too_often(4, 3)
    assert not retry.unsettled_too_often(1_000, 0)


# -- schedule ------------------------------------------------------------------------


def test_every_queue_is_due_at_start_and_waits_a_poll_interval_after_an_empty_read():
    schedule = Schedule(["a", "b"], poll_interval=3600, throttles={})
    due = dict(schedule.due())
    assert set(due) == {"a", "b"}
    schedule.read_done("a", due["a"], 0)
    assert [q for q, _ in schedule.due()] == ["b"]


def test_a_queue_that_gave_messages_is_read_again_at_once():
    schedule = Schedule(["a"], poll_interval=3600, throttles={})
    [(queue, token)] = schedule.due()
    schedule.read_done(queue, token, 5)
    assert [q for q, _ in schedule.due()] == ["a"]


def test_a_wake_up_during_a_read_is_not_lost():
    schedule = Schedule(["a"], poll_interval=3600, throttles={})
    [(queue, token)] = schedule.due()
    schedule.wake("a")  # a notification arrives while the read runs
    schedule.read_done(queue, token, 0)
    assert [q for q, _ in schedule.due()] == ["a"]


def test_a_woken_queue_is_read_again_until_its_throttle_window_has_passed():
    schedule = Schedule(["a"], poll_interval=3600, throttles={"a": 0.2})
    [(queue, token)] = schedule.due()
    schedule.read_done(queue, token, 0)  # idle: the next poll is an hour away
    schedule.wake("a")
    woken = time.monotonic()
    reads: list[float] = []
    while time.monotonic() - woken < 1.0:
        for queue, token in schedule.due():
            reads.append(time.monotonic() - woken)
            schedule.read_done(queue, token, 0)
        time.sleep(0.005)
    # Several reads, the last one once the whole window had passed; then idle again.
    assert len(reads) >= 3
    assert reads[-1] >= 0.2
    assert schedule.due() == []


def test_a_retried_message_is_read_when_it_becomes_visible_not_at_the_next_poll():
    schedule = Schedule(["a"], poll_interval=3600, throttles={})
    [(queue, token)] = schedule.due()
    schedule.read_done(queue, token, 1)  # a message: read again at once
    visible = time.monotonic() + 0.2
    schedule.retry_at("a", [visible])  # it failed; its backoff ends in 0.2 s
    [(queue, token)] = schedule.due()
    schedule.read_done(queue, token, 0)  # nothing visible yet: idle, but not for an hour
    assert schedule.due() == []
    waiter = threading.Thread(target=schedule.wait, daemon=True)
    waiter.start()
    waiter.join(30)  # a safety net: without the retry known, it waits for the hour's poll
    assert not waiter.is_alive() and time.monotonic() >= visible
    [(queue, token)] = schedule.due()
    schedule.read_done(queue, token, 0)  # the retry was served: idle until the poll
    assert schedule.due() == []


def test_wait_returns_at_once_after_close():
    schedule = Schedule(["a"], poll_interval=3600, throttles={})
    [(queue, token)] = schedule.due()
    schedule.read_done(queue, token, 0)
    schedule.close()
    schedule.wait()  # would block for an hour if close had no effect


# -- registry and settings --------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "error"),
    [
        ({"batch": 0}, "batch must be an integer of at least 1"),
        ({"vt": "30"}, "vt must be an integer of at least 1"),
        ({"max_receive_count": -1}, "max_receive_count must be an integer of at least 0"),
        ({"on_success": "keep"}, "on_success must be 'archive' or 'delete'"),
        ({"retry_delay": 0}, "retry_delay must be seconds in (0, 3600]"),
    ],
)
def test_consumer_refuses_bad_settings_naming_them(kwargs, error):
    with pytest.raises(InvalidArgument, match=re.escape(error)):
        consumer("orders", **kwargs)


def test_consumer_refuses_a_bad_queue_name():
    with pytest.raises(InvalidQueueName):
        consumer("bad;name")


def test_a_queue_cannot_have_two_handlers():
    def first(message):
        pass

    def second(message):
        pass

    consumer("t_unit_twice")(first)
    with pytest.raises(ImproperlyConfigured, match="has two handlers"):
        consumer("t_unit_twice")(second)
    assert registry.registered()["t_unit_twice"].handler is first


def test_a_queue_without_handler_is_reported_with_how_to_fix_it():
    with pytest.raises(ImproperlyConfigured, match=r"@django_pgmq.consumer\('t_unit_none'\)"):
        registry.find_consumer("t_unit_none")


def test_handler_paths_that_do_not_import_are_reported():
    with pytest.raises(ImproperlyConfigured, match=r"cannot import handler 'tests\.nope\.handle'"):
        registry.import_handler("tests.nope.handle")


def test_settings_come_from_the_command_line_then_decorator_then_stored_row_then_defaults():
    spec = Consumer(handler, "orders", batch=50, vt=None, max_receive_count=None)
    stored = SimpleNamespace(
        batch=7, vt=90, max_receive_count=2, on_success="", dead_letter_queue=""
    )
    settings = resolve("orders", spec, {"batch": None, "max_receive_count": 9}, stored)
    assert (settings.batch, settings.vt, settings.max_receive_count) == (50, 90, 9)
    assert (settings.on_success, settings.dead_letter, settings.retry_delay) == (
        "archive",
        "orders_dlq",
        1.0,
    )


def test_a_default_dead_letter_name_that_would_be_too_long_must_be_given():
    long_name = "q" * 45
    with pytest.raises(InvalidArgument, match="name one with dead_letter"):
        resolve(long_name, Consumer(handler), {}, None)
    assert resolve(long_name, Consumer(handler), {"dead_letter": "dlq"}, None).dead_letter == "dlq"


def test_a_queue_cannot_be_its_own_dead_letter_queue():
    with pytest.raises(InvalidArgument, match="cannot be its own dead-letter queue"):
        resolve("orders", Consumer(handler, dead_letter="Orders"), {}, None)


def test_timings_drain_only_the_queues_asked_for():
    """A worker on two databases writes each database's handler durations into it."""
    from django_pgmq.worker.timing import Timings

    timings = Timings()
    timings.add("a", 0.1)
    timings.add("b", 0.2)
    assert timings.drain(["a", "c"]) == {"a": (1, [0.1])}
    assert timings.drain() == {"b": (1, [0.2])}
    assert timings.drain() == {}


def test_the_deprecated_max_reads_keyword_sets_max_receive_count_with_a_warning():
    with pytest.warns(DeprecationWarning, match=r"max_reads=\.\.\.\) is deprecated"):
        decorated = consumer(max_reads=3)(handler)
    assert decorated.pgmq_consumer.max_receive_count == 3
    assert consumer(max_receive_count=2)(handler).pgmq_consumer.max_receive_count == 2


def test_both_spellings_of_max_receive_count_are_refused():
    with pytest.raises(InvalidArgument, match="max_reads is the deprecated name of max_receive"):
        consumer(max_reads=3, max_receive_count=2)
