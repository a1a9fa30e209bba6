"""A queue attribute as declared in SQL (``pgmq._queue_attribute_declaration()``).

The declaration is SQL's (sql/25_attributes.sql); the generated module
``attributes_declared.py`` holds its rows as `AttributeSpec`s, and the admin form,
pgmq_create's options and pgmq_attributes' ``--set`` parsing and help derive from them.
The generator (and the docs table) is developer tooling, in
``django_pgmq/sqltools/attributes.py``.
"""

from __future__ import annotations

from dataclasses import dataclass

# The kinds whose value is an integer at least the declared minimum (as the SQL check says).
NUMBER_KINDS = ("seconds", "bytes", "count")
KINDS = (*NUMBER_KINDS, "switch", "queue", "rate")
# "limit": applied when a message is read, through the limit rows (sql/26_limits.sql).
SIDES = ("send", "read", "both", "retention", "limit")


@dataclass(frozen=True)
class AttributeSpec:
    """One declared queue attribute (a row of ``pgmq._queue_attribute_declaration()``)."""

    key: str
    kind: str
    minimum: int | None
    side: str
    option: str | None
    allowed: str
    help: str

    @property
    def label(self) -> str:
        """The admin form's label: ``max_in_flight`` -> ``Max in flight`` (and the
        project's spelling of "dead-letter")."""
        return self.key.replace("_", " ").capitalize().replace("ead letter", "ead-letter")
