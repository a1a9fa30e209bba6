"""What is generated from the queue attributes' declaration has not drifted from it
(the database side: tests/integration/test_attribute_declaration.py)."""

from __future__ import annotations

from django_pgmq.attribute_spec import KINDS
from django_pgmq.attributes_declared import DECLARED, LABELS
from django_pgmq.sqltools import attributes
from django_pgmq.sqltools.attributes import check, render_docs_table, render_module
from tests.unit.test_docs import ROOT, load_docs_module

REGENERATE = "run: python -m django_pgmq.sqltools.regenerate (see CONTRIBUTING.md)"


def test_the_declaration_is_well_formed():
    assert check(DECLARED) == []
    assert [s.key for s in DECLARED] == list(LABELS)


def test_the_generated_module_is_as_the_generator_writes_it():
    text = attributes.GENERATED.read_text(encoding="utf-8")
    assert text == render_module(DECLARED), REGENERATE


def test_the_docs_table_is_the_declarations():
    """The guide holds the table's marker, which the docs build replaces by the table of
    the generated module: a row per declared attribute, in declaration order."""
    text = (ROOT / "docs" / "guide" / "attributes.md").read_text(encoding="utf-8")
    assert text.count("<!-- generated: attributes -->") == 1
    built = load_docs_module("hooks").on_page_markdown(text)
    table = render_docs_table(DECLARED)
    assert table in built and "<!-- generated: attributes -->" not in built
    rows = [line for line in table.splitlines() if line.startswith("| `")]
    assert [row.split("`")[1] for row in rows] == [s.key for s in DECLARED]


def test_a_bad_declaration_is_reported():
    (first, *_) = DECLARED
    bad = type(first)(**{**first.__dict__, "kind": "colour", "minimum": None})
    [problem] = check((bad,))
    # The kinds listed are attribute_spec.KINDS, whatever kinds it has (a new kind is
    # one Kind there, and nothing in this test).
    assert problem.startswith("delivery_delay: kind 'colour' is not one of seconds, bytes, ")
    assert problem.endswith(", ".join(KINDS)) and "rate" in KINDS
