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


def test_a_stale_attribute_module_fails_the_check_and_is_rewritten(conninfo, tmp_path, monkeypatch):
    """On a copy of the generated module: the checkout's stays whole for tests running beside."""
    original = attributes.GENERATED.read_text(encoding="utf-8")
    path = tmp_path / "attributes_declared.py"
    path.write_text(original.replace("key='paused'", "key='pause'", 1), encoding="utf-8")
    monkeypatch.setattr(attributes, "GENERATED", path)
    checked = regenerate.attributes(conninfo, False, None)
    assert checked.stale and checked.lines == [f"stale: {path}"]
    outcome = regenerate.attributes(conninfo, True, None)
    assert outcome.lines == [f"wrote {path}"]
    assert path.read_text(encoding="utf-8") == original


def test_a_stale_catalogue_fails_the_check_and_is_left_as_it_was(conninfo, tmp_path, monkeypatch):
    """Without GNU gettext the catalogue is not checked, and the check says so. On a copy
    of the catalogue; the check never writes in the checkout (CI's legs share it)."""
    if shutil.which("xgettext") is None:
        outcome = regenerate.catalogue(conninfo, False, None)
        assert not outcome.stale and outcome.lines[0].startswith("skipped: GNU gettext")
        return
    shipped = regenerate.CATALOGUE
    original = shipped.read_text(encoding="utf-8")
    entry = 'msgid "Only messages containing"\nmsgstr ""\n\n'
    assert entry in original
    path = tmp_path / "django.pot"
    path.write_text(original.replace(entry, ""), encoding="utf-8")
    monkeypatch.setattr(regenerate, "CATALOGUE", path)
    outcome = regenerate.catalogue(conninfo, False, None)
    assert outcome.stale and outcome.lines == [f"stale: {path}"]
    assert path.read_text(encoding="utf-8") == original.replace(entry, "")
    assert shipped.read_text(encoding="utf-8") == original
    assert not (regenerate.PACKAGE / "locale" / "en").exists()
    written = regenerate.catalogue(conninfo, True, None)
    assert written.lines[0].startswith(f"wrote {path}")
    assert entry in path.read_text(encoding="utf-8")
