"""The queue attributes are declared once, in pgmq._queue_attribute_declaration(): the
migrated database's declaration is the generated module's, and a dummy attribute added
to the declaration is checked by SQL and gets a form field, a pgmq_create option, help
and a docs row with nothing else changed (CONTRIBUTING.md's recipe stays true)."""

from __future__ import annotations

import argparse
import json
from dataclasses import astuple

import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb

from django_pgmq.attribute_spec import KINDS, AttributeSpec
from django_pgmq.attributes_declared import DECLARED
from django_pgmq.dashboard.attribute_forms import attributes_form_class
from django_pgmq.management.attribute_args import (
    add_attribute_options,
    attribute_options,
    keys_help,
)
from django_pgmq.sqltools.attributes import check, read_declaration, render_docs_table

DUMMY = AttributeSpec(
    key="dummy_limit",
    kind="count",
    minimum=3,
    side="read",
    option="--dummy-limit",
    allowed="an integer, 3 or more",
    help="A dummy attribute of the tests.",
)


def test_the_migrated_declaration_is_the_generated_modules(tx):
    """Fails when the SQL changed and ``python -m django_pgmq.sqltools.regenerate`` was
    not run (or the migration is missing)."""
    assert read_declaration(tx) == DECLARED


def test_the_error_texts_come_from_the_declaration(tx):
    rules = tx.execute("SELECT key, allowed FROM pgmq._queue_attribute_rules()").fetchall()
    assert rules == [(s.key, s.allowed) for s in DECLARED]


def declare(conn: psycopg.Connection, specs: tuple[AttributeSpec, ...]) -> None:
    """Replace the SQL declaration with ``specs`` (in the test's transaction)."""
    rows = sql.SQL(",\n").join(
        sql.SQL("({})").format(sql.SQL(", ").join(map(sql.Literal, astuple(spec))))
        for spec in specs
    )
    conn.execute(
        sql.SQL(
            "CREATE OR REPLACE FUNCTION pgmq._queue_attribute_declaration() "
            "RETURNS TABLE(key text, kind text, minimum integer, side text, option text, "
            "allowed text, help text) LANGUAGE sql IMMUTABLE AS $fn$ "
            "SELECT * FROM (VALUES {}) v(key, kind, minimum, side, option, allowed, help) $fn$"
        ).format(rows)
    )


@pytest.fixture
def with_dummy(tx) -> tuple[AttributeSpec, ...]:
    """The declaration with DUMMY added, in the test's transaction (rolled back after)."""
    declare(tx, (*DECLARED, DUMMY))
    return read_declaration(tx)


def test_a_declared_attribute_is_checked_by_the_sql_api(tx, tx_queue, with_dummy):
    assert with_dummy[-1] == DUMMY
    got = tx.execute(
        "SELECT pgmq.set_queue_attributes(%s, %s)::text", [tx_queue, Jsonb({"dummy_limit": 5})]
    ).fetchone()
    assert got == ('{"dummy_limit": 5}',)
    tx.execute("SAVEPOINT bad")
    with pytest.raises(psycopg.Error, match=r'"dummy_limit" must be an integer, 3 or more, got 2'):
        tx.execute(
            "SELECT pgmq.set_queue_attributes(%s, %s)", [tx_queue, Jsonb({"dummy_limit": 2})]
        )
    tx.execute("ROLLBACK TO SAVEPOINT bad")


def test_an_undeclared_attribute_is_refused(tx, tx_queue):
    tx.execute("SAVEPOINT bad")
    with pytest.raises(psycopg.Error, match=r'unknown queue attribute "dummy_limit"'):
        tx.execute(
            "SELECT pgmq.set_queue_attributes(%s, %s)", [tx_queue, Jsonb({"dummy_limit": 5})]
        )
    tx.execute("ROLLBACK TO SAVEPOINT bad")


def test_a_declared_attribute_gets_a_form_field(with_dummy):
    form_class = attributes_form_class(with_dummy)
    field = form_class.base_fields["dummy_limit"]
    assert str(field.label) == "Dummy limit"
    form = form_class({"dummy_limit": "4"})
    assert form.is_valid(), form.errors
    assert form.attributes()["dummy_limit"] == 4
    assert "must be an integer, 3 or more" in str(form_class({"dummy_limit": "2"}).errors)


# A value of each kind, as a person types it (parsed by the kind's one parser).
TYPED = {
    "seconds": "5m",
    "bytes": "1KiB",
    "count": "7",
    "switch": "yes",
    "queue": "elsewhere",
    "rate": "100/1m",
}


def test_every_kind_is_declared_once_and_checked_by_sql(tx, tx_queue):
    """Each kind of attribute_spec.KINDS: a dummy attribute of that kind takes the value
    its parser makes of a typed value, through the SQL API's check, and shows it back in
    the text the parser reads. Fails when a kind lacks its branch in
    pgmq._check_queue_attributes, or its parser and format disagree."""
    assert set(TYPED) == set(KINDS)
    dummies = tuple(
        AttributeSpec(
            key=f"dummy_{kind}",
            kind=kind,
            minimum=0 if KINDS[kind].number else None,
            side="read",
            option=None,
            allowed="a dummy value",
            help="A dummy attribute of the tests.",
        )
        for kind in KINDS
    )
    declare(tx, (*DECLARED, *dummies))
    assert check(read_declaration(tx)) == []
    values = {spec.key: spec.parse(TYPED[spec.kind]) for spec in dummies}
    stored = json.loads(
        tx.execute(
            "SELECT pgmq.set_queue_attributes(%s, %s)::text", [tx_queue, Jsonb(values)]
        ).fetchone()[0]
    )
    assert stored == values
    for spec in dummies:
        assert spec.parse(spec.show(stored[spec.key])) == stored[spec.key]


def test_a_declared_attribute_gets_an_option_help_and_a_docs_row(with_dummy):
    parser = argparse.ArgumentParser()
    add_attribute_options(parser, with_dummy)
    options = vars(parser.parse_args(["--dummy-limit", "7", "--delay", "5m"]))
    assert attribute_options(options, with_dummy) == {"dummy_limit": 7, "delivery_delay": 300}
    assert "A dummy attribute of the tests." in parser.format_help()
    assert "dummy_limit" in keys_help(with_dummy)
    assert "| `dummy_limit` | integer >= 3 | read | `--dummy-limit` |" in render_docs_table(
        with_dummy
    )
