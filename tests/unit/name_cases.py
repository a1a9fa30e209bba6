"""Queue names shared by the Python and SQL naming tests, so both sides obey one list."""

from __future__ import annotations

# (id, name): names both `names.validate_queue_name` and `pgmq.validate_queue_name` refuse.
INVALID_NAMES: list[tuple[str, str | None]] = [
    ("single-quote", "a'b"),
    ("double-quote", 'a"b'),
    ("semicolon", "a;b"),
    ("sql-comment", "a--b"),
    ("dollar", "a$b"),
    ("space", "a b"),
    ("injection", "x; DROP TABLE pgmq.meta; --"),
    ("too-long-48", "q" * 48),
    ("much-too-long", "q" * 300),
    ("empty", ""),
    ("null", None),
    ("non-ascii", "café"),
    ("emoji", "queue_\U0001f600"),
    ("leading-dash", "-orders"),
    ("dot", "a.b"),
    ("slash", "a/b"),
    ("trailing-newline", "orders\n"),
    ("tab", "a\tb"),
]

# Names both sides accept, including the longest allowed.
VALID_NAMES: list[str] = ["a", "orders", "Orders_2", "_private", "9lives", "x-y_z", "q" * 47]
