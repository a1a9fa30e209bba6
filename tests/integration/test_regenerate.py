"""One command regenerates everything generated (``python -m django_pgmq.sqltools.regenerate``),
and its ``--check`` fails while anything generated is stale (CI runs it)."""

from __future__ import annotations

import shutil

import pytest

from django_pgmq.sqltools import attributes, migrate, regenerate


@pytest.fixture
def conninfo() -> str:
    return migrate.server_conninfo()


def test_nothing_generated_is_stale():
    """Fails when a generator was not run after its source changed (as CI's --check)."""
    assert regenerate.main(["--check"]) == 0


def test_a_stale_docs_table_fails_the_check_and_is_rewritten(conninfo):
    path = attributes.DOCS_TABLE
    original = path.read_text(encoding="utf-8")
    try:
        path.write_text(
            original.replace(attributes.END, "| `stray` | | | | |\n" + attributes.END),
            encoding="utf-8",
        )
        checked = regenerate.attributes(conninfo, False, None)
        assert checked.stale and checked.lines == ["stale: docs/guide/attributes.md"]
        outcome = regenerate.attributes(conninfo, True, None)
        assert outcome.lines == ["wrote docs/guide/attributes.md"]
        assert path.read_text(encoding="utf-8") == original
    finally:
        path.write_text(original, encoding="utf-8")


def test_a_stale_catalogue_fails_the_check_and_is_left_as_it_was(conninfo):
    """Without GNU gettext the catalogue is not checked, and the check says so."""
    if shutil.which("xgettext") is None:
        outcome = regenerate.catalogue(conninfo, False, None)
        assert not outcome.stale and outcome.lines[0].startswith("skipped: GNU gettext")
        return
    path = regenerate.CATALOGUE
    original = path.read_text(encoding="utf-8")
    entry = 'msgid "Only messages containing"\nmsgstr ""\n\n'
    assert entry in original
    try:
        path.write_text(original.replace(entry, ""), encoding="utf-8")
        outcome = regenerate.catalogue(conninfo, False, None)
        assert outcome.stale and outcome.lines == ["stale: django_pgmq/locale/django.pot"]
        assert path.read_text(encoding="utf-8") == original.replace(entry, "")
        assert not (regenerate.PACKAGE / "locale" / "en").exists()
    finally:
        path.write_text(original, encoding="utf-8")
