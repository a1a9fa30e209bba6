"""The SQLSTATE registry: which PgmqError a database error becomes, and how it names the queue."""

from __future__ import annotations

from django_pgmq.errors import (
    InvalidArgument,
    QueueNameConflict,
    QueueNotFound,
    from_sqlstate,
    lookup,
)


def test_codes_of_our_own_class_map_to_their_errors_and_others_to_none():
    assert lookup("PQ004") is InvalidArgument
    assert lookup("PQ003") is QueueNameConflict
    assert lookup("23505") is None
    assert lookup(None) is None
    assert from_sqlstate("23505", "duplicate key", "orders") is None


def test_the_queue_is_named_once_whether_or_not_the_database_named_it():
    bare = from_sqlstate("PQ004", "message too large", "orders")
    named = from_sqlstate("PQ004", 'queue "orders": message too large', "orders")
    assert isinstance(bare, InvalidArgument) and isinstance(named, InvalidArgument)
    assert str(bare) == str(named) == 'queue "orders": message too large'


def test_another_queue_named_in_the_text_still_gets_the_prefix():
    error = from_sqlstate("PQ004", 'queue "orders_dlq": is the queue itself', "orders")
    assert str(error) == 'queue "orders": queue "orders_dlq": is the queue itself'


def test_a_missing_queue_is_queue_not_found_only_when_a_queue_was_asked_for():
    assert isinstance(from_sqlstate("PQ002", "does not exist", "orders"), QueueNotFound)
    assert from_sqlstate("PQ002", "does not exist", None) is None
