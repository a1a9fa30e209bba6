"""The migration module `sqltools.migrate make` writes passes the project's ruff rules
(lines of at most 100 characters) whatever the words it is given: a contributor's first
migration must not fail `ruff check` for a long name."""

from __future__ import annotations

import ast

from django_pgmq.sqltools.migrate import _slug, migration_source


def test_a_long_why_and_the_longest_name_stay_within_the_line_length():
    why = "a delivery_jitter attribute of a new kind, percent, " * 4
    name = f"0009_{_slug('x' * 80)}"  # one word: the slug's longest cut
    assert len(name) >= 45
    source = migration_source(why, name, "0008_attributes_limits_schedules_tasks_workflows")
    assert max(len(line) for line in source.splitlines()) <= 100
    tree = ast.parse(source)
    doc = ast.get_docstring(tree)
    assert doc is not None and doc.startswith("a delivery_jitter attribute")
    assert f"{name}.sql" in source and f'_frozen.read("{name}_reverse.sql")' in source
