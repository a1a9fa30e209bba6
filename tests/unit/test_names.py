"""Queue-name rules in Python (the SQL side is checked with the same list in integration)."""

from __future__ import annotations

import pytest

from django_pgmq.errors import InvalidQueueName, PgmqError
from django_pgmq.names import (
    MAX_QUEUE_NAME_LENGTH,
    notify_channel,
    table_name,
    validate_queue_name,
)
from tests.unit.name_cases import INVALID_NAMES, VALID_NAMES


@pytest.mark.parametrize("name", [n for _, n in INVALID_NAMES], ids=[i for i, _ in INVALID_NAMES])
def test_invalid_names_are_refused(name):
    with pytest.raises(InvalidQueueName) as info:
        validate_queue_name(name)
    assert str(info.value).startswith("queue name")


@pytest.mark.parametrize("name", VALID_NAMES)
def test_valid_names_are_returned_unchanged(name):
    assert validate_queue_name(name) == name


def test_invalid_queue_name_is_a_value_error_and_a_pgmq_error():
    with pytest.raises(ValueError):
        validate_queue_name("a b")
    with pytest.raises(PgmqError):
        validate_queue_name("a b")


@pytest.mark.parametrize("value", [1, b"orders", ["orders"], 3.5])
def test_non_strings_are_refused_naming_the_type(value):
    with pytest.raises(InvalidQueueName, match=type(value).__name__):
        validate_queue_name(value)


def test_too_long_message_starts_with_pgmq_text_and_gives_the_length():
    with pytest.raises(InvalidQueueName) as info:
        validate_queue_name("x" * 60)
    text = str(info.value)
    assert text.startswith("queue name is too long, maximum length is 47 characters")
    assert "has 60" in text


def test_too_long_message_shortens_a_huge_name():
    with pytest.raises(InvalidQueueName) as info:
        validate_queue_name("y" * 5000)
    assert len(str(info.value)) < 200


@pytest.mark.parametrize("name", ["a$b", "a;b", "a--b", "a'b"])
def test_pgmq_forbidden_characters_use_pgmq_text(name):
    with pytest.raises(InvalidQueueName) as info:
        validate_queue_name(name)
    # pgmq's own text, backslash included (its SQL writes \'' in the message)
    assert str(info.value).startswith("queue name contains invalid characters: $, ;, --, or \\'")
    assert repr(name) in str(info.value)


def test_other_characters_name_the_allowed_set():
    with pytest.raises(InvalidQueueName, match="ASCII letters, digits"):
        validate_queue_name("café")


def test_length_limit_is_47():
    assert MAX_QUEUE_NAME_LENGTH == 47
    assert validate_queue_name("z" * 47) == "z" * 47


@pytest.mark.parametrize(
    ("name", "prefix", "expected"),
    [("Orders", "q", "q_orders"), ("Orders", "a", "a_orders"), ("x-Y_1", "q", "q_x-y_1")],
)
def test_table_name_is_prefixed_and_lower_cased(name, prefix, expected):
    assert table_name(name, prefix) == expected


def test_table_name_validates():
    with pytest.raises(InvalidQueueName):
        table_name("a;b")


def test_notify_channel_keeps_the_name_as_given():
    assert notify_channel("Orders") == "pgmq.q_Orders.INSERT"
    with pytest.raises(InvalidQueueName):
        notify_channel("")


def test_the_error_names_every_refused_character_space_and_non_ascii_included():
    """``ord'ers ✓`` is refused for the quote, the space and the check mark."""
    with pytest.raises(InvalidQueueName) as info:
        validate_queue_name("ord'ers ✓")
    text = str(info.value)
    assert text.startswith("queue name contains invalid characters: $, ;, --, or \\'")  # pgmq's
    assert "refused: \"'\", a space, '✓'" in text
    with pytest.raises(InvalidQueueName, match=r"refused: a space, 'é'"):
        validate_queue_name("my café")
