"""Command-line values of queue attributes: durations, sizes, switches and KEY=VALUE."""

from __future__ import annotations

import argparse

import pytest

from django_pgmq.management.attribute_args import (
    describe,
    duration,
    key_value,
    rate,
    size,
    switch,
)


@pytest.mark.parametrize(
    ("text", "seconds"),
    [("300", 300), ("90s", 90), ("5m", 300), ("2h", 7200), ("14d", 1_209_600), (" 1W ", 604_800)],
)
def test_durations(text, seconds):
    assert duration(text) == seconds


@pytest.mark.parametrize("text", ["", "1.5h", "2 fortnights", "h"])
def test_bad_durations(text):
    with pytest.raises(argparse.ArgumentTypeError, match="must be a duration"):
        duration(text)


@pytest.mark.parametrize(
    ("parse", "text"), [("duration", "-5"), ("duration", " -1d"), ("size", "-1")]
)
def test_negative_durations_and_sizes_are_refused_as_such(parse, text):
    with pytest.raises(argparse.ArgumentTypeError, match=f"must be positive, got '{text}'"):
        {"duration": duration, "size": size}[parse](text)


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("1000", 1000),
        ("64KB", 64_000),
        ("256KiB", 262_144),
        ("1mb", 1_000_000),
        ("1MiB", 1_048_576),
    ],
)
def test_sizes(text, count):
    assert size(text) == count


@pytest.mark.parametrize("text", ["", "big", "1GB"])
def test_bad_sizes(text):
    with pytest.raises(argparse.ArgumentTypeError, match="must be a size"):
        size(text)


def test_switches():
    assert [switch(t) for t in ("true", "Yes", "on", "false", "NO", "off")] == [
        True, True, True, False, False, False,
    ]  # fmt: skip
    with pytest.raises(argparse.ArgumentTypeError, match="must be true or false"):
        switch("maybe")


@pytest.mark.parametrize(
    ("text", "pair"),
    [
        ("deduplication_window=5m", ("deduplication_window", 300)),
        ("max_message_size=1KiB", ("max_message_size", 1024)),
        ("paused=yes", ("paused", True)),
        ("dead_letter_queue= orders_dlq ", ("dead_letter_queue", "orders_dlq")),
        ("max_receive_count=5", ("max_receive_count", 5)),
        ("delivery_delay=", ("delivery_delay", None)),
        ("priorities=null", ("priorities", None)),
        ("colour=red", ("colour", "red")),
    ],
)
def test_key_values(text, pair):
    assert key_value(text) == pair


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("paused", "must be KEY=VALUE"),
        ("=1", "must be KEY=VALUE"),
        ("delivery_delay=soon", "delivery_delay: must be a duration"),
    ],
)
def test_bad_key_values(text, says):
    with pytest.raises(argparse.ArgumentTypeError, match=says):
        key_value(text)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("100/1m", {"count": 100, "seconds": 60}),
        ("10/2s", {"count": 10, "seconds": 2}),
        ("5/0.5s", {"count": 5, "seconds": 0.5}),
        ("100/60", {"count": 100, "seconds": 60}),
        ("3/1h", {"count": 3, "seconds": 3600}),
    ],
)
def test_rates(text, value):
    assert rate(text) == value
    assert key_value(f"rate_limit={text}") == ("rate_limit", value)


@pytest.mark.parametrize(
    ("value", "shown"),
    [
        ({"count": 100, "seconds": 60}, "100/1m"),
        ({"count": 3, "seconds": 3600}, "3/1h"),
        ({"count": 10, "seconds": 90}, "10/90s"),
        ({"count": 5, "seconds": 0.5}, "5/0.5s"),
    ],
)
def test_a_rate_is_shown_as_it_is_typed(value, shown):
    """One format: what pgmq_attributes prints and the admin shows is what both read."""
    assert describe("rate_limit", value) == shown
    assert rate(shown) == value


def test_values_are_shown_by_kind():
    assert describe("dead_letter_queue", "orders_dlq") == "orders_dlq"
    assert describe("priorities", True) == "true"
    assert describe("delivery_delay", 300) == "300"
    assert describe("colour", {"a": 1}) == '{"a": 1}'


@pytest.mark.parametrize("text", ["10", "0/1m", "x/1m", "10/0", "10/soon", '{"count": 1}'])
def test_bad_rates(text):
    with pytest.raises(argparse.ArgumentTypeError):
        rate(text)


def test_max_in_flight_and_a_json_rate_limit():
    assert key_value("max_in_flight=5") == ("max_in_flight", 5)
    assert key_value('rate_limit={"count": 3, "seconds": 1.5}') == (
        "rate_limit",
        {"count": 3, "seconds": 1.5},
    )
    with pytest.raises(argparse.ArgumentTypeError, match="max_in_flight"):
        key_value("max_in_flight=0")
