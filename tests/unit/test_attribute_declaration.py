"""What is generated from the queue attributes' declaration has not drifted from it
(the database side: tests/integration/test_attribute_declaration.py)."""

from __future__ import annotations

from django_pgmq.attribute_spec import KINDS
from django_pgmq.attributes_declared import DECLARED, LABELS
from django_pgmq.sqltools import attributes
from django_pgmq.sqltools.attributes import check, docs_table_in, render_docs_table, render_module

REGENERATE = "run: python -m django_pgmq.sqltools.regenerate (see CONTRIBUTING.md)"


def test_the_declaration_is_well_formed():
    assert check(DECLARED) == []
    assert [s.key for s in DECLARED] == list(LABELS)


def test_the_generated_module_is_as_the_generator_writes_it():
    text = attributes.GENERATED.read_text(encoding="utf-8")
    assert text == render_module(DECLARED), REGENERATE


def test_the_docs_table_is_the_declarations():
    text = attributes.DOCS_TABLE.read_text(encoding="utf-8")
    assert docs_table_in(text) == render_docs_table(DECLARED), REGENERATE


def test_a_bad_declaration_is_reported():
    (first, *_) = DECLARED
    bad = type(first)(**{**first.__dict__, "kind": "colour", "minimum": None})
    [problem] = check((bad,))
    # The kinds listed are attribute_spec.KINDS, whatever kinds it has (a new kind is
    # one Kind there, and nothing in this test).
    assert problem.startswith("delivery_delay: kind 'colour' is not one of seconds, bytes, ")
    assert problem.endswith(", ".join(KINDS)) and "rate" in KINDS
