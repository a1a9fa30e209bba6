"""One command regenerates everything generated (``python -m django_pgmq.sqltools.regenerate``),
and its ``--check`` fails while anything generated is stale (CI runs it)."""

from __future__ import annotations

import shutil

import pytest

from django_pgmq.sqltools import (
    attributes,
    command_table,
    migrate,
    regenerate,
    regions,
    settings_table,
)


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


def test_a_stale_command_table_fails_the_check_and_is_rewritten(tmp_path, monkeypatch):
    """A row that no command declares (as when a command's declaration changed and the
    page was not regenerated) fails the check; writing brings back the declared table.
    On a copy of the page, as above."""
    original = command_table.PAGE.read_text(encoding="utf-8")
    row = "| `pgmq_send QUEUE PAYLOAD` / `--file PATH` |"
    assert row in original
    path = tmp_path / "commands.md"
    path.write_text(original.replace(row, "| `pgmq_send QUEUE` |"), encoding="utf-8")
    monkeypatch.setattr(command_table, "PAGE", path)
    checked = regenerate.command_table("", False, None)
    assert checked.stale and checked.lines == [f"stale: {path}"]
    assert regenerate.command_table("", True, None).lines == [f"wrote {path}"]
    assert path.read_text(encoding="utf-8") == original


def test_a_command_without_its_declaration_fails_the_check(monkeypatch):
    """A command that declares no row nor guide is named, and nothing is written."""
    declared = {**command_table.declarations(), "pgmq_redrive": None}
    monkeypatch.setattr(command_table, "declarations", lambda: declared)
    outcome = regenerate.command_table("", True, None)
    assert outcome.stale and outcome.lines[0].startswith("pgmq_redrive: Command declares no")


def test_a_stale_settings_table_fails_the_check_and_is_rewritten(tmp_path, monkeypatch):
    """The worker guide's table of consumer settings, on a copy of the guide."""
    original = settings_table.GUIDE.read_text(encoding="utf-8")
    _, END = regions.markers(settings_table.REGION)
    path = tmp_path / "worker.md"
    path.write_text(
        original.replace(END, "| `--stray N` | | | | |\n" + END),
        encoding="utf-8",
    )
    monkeypatch.setattr(settings_table, "GUIDE", path)
    checked = regenerate.settings_table("", False, None)
    assert checked.stale and checked.lines == [f"stale: {path}"]
    outcome = regenerate.settings_table("", True, None)
    assert outcome.lines == [f"wrote {path}"]
    assert path.read_text(encoding="utf-8") == original
    assert not regenerate.settings_table("", False, None).stale


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
