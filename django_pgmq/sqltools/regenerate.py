"""Regenerate everything generated in this repository, or check that nothing is stale.

    python -m django_pgmq.sqltools.regenerate            # write what is stale
    python -m django_pgmq.sqltools.regenerate --check    # fail (exit 1) on what is stale
    python -m django_pgmq.sqltools.regenerate --why "a few words"   # and the migration

What is generated, each from its one source:

- the migrations' frozen SQL (``migrations/NNNN_*.py`` and ``migrations/sql/``), from the
  live SQL in ``django_pgmq/sql/``: a new migration is made only when the SQL changed,
  and it needs the words saying why (``--why``); ``--check`` runs ``migrate check``;
- ``attributes_declared.py``, from ``pgmq._queue_attribute_declaration()``
  (``sqltools.attributes``), whose table in docs/guide/attributes.md is made from it at
  every docs build (``docs/hooks.py``);
- the table of consumer settings in docs/guide/worker.md, from their declaration
  (``consumer_settings``; ``sqltools.settings_table``);
- the translation catalogue ``locale/django.pot``, from the strings marked in the code and
  templates (Django's ``makemessages``; needs GNU gettext's ``xgettext``, else skipped and
  said); the German ``.po`` is then merged and translated by hand (CONTRIBUTING.md);
- the table "What they print and when they fail" of docs/reference/commands.md, from
  each command's ``reference`` declaration beside its help (``sqltools.command_table``);
- the rest of the command reference, made from each command's ``--help`` at every docs
  build (``docs/hooks.py``): nothing to write, ``--check`` makes sure it renders.

The database server is the configured one (``DATABASE_URL``); without it, the example
project's embedded PostgreSQL, started here when it is not running. CI runs ``--check``.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "django_pgmq"
CATALOGUE = PACKAGE / "locale" / "django.pot"
_CREATED = re.compile(r'^"POT-Creation-Date: .*\\n"$', re.MULTILINE)


@dataclass
class Outcome:
    """What one generator found or did: lines to print, and whether something is stale."""

    lines: list[str]
    stale: bool = False


@dataclass(frozen=True)
class Generator:
    """One generated thing: ``run(conninfo, write, why)`` checks it, or writes it."""

    name: str
    run: Callable[[str, bool, str | None], Outcome]


def migrations(conninfo: str, write: bool, why: str | None) -> Outcome:
    """The frozen migration SQL against the live SQL (``sqltools.migrate``)."""
    from . import migrate

    found = migrate.compare(conninfo)
    if not found:
        return Outcome(["the migrations produce the live SQL"])
    if not write or not why:
        hint = "" if write else " (run without --check)"
        return Outcome(
            [*found, f"{len(found)} differ: write the migration with --why 'a few words'{hint}"],
            stale=True,
        )
    path = migrate.make(why, conninfo)
    remaining = migrate.compare(conninfo)
    lines = [f"wrote {path} and its SQL", *remaining]
    if remaining:
        lines.append(f"{len(remaining)} still differ: write the -- BY HAND blocks")
    return Outcome(lines, stale=bool(remaining))


def attributes(conninfo: str, write: bool, why: str | None) -> Outcome:
    """attributes_declared.py (``sqltools.attributes``)."""
    from . import attributes as generator

    return _files(generator.rendered(conninfo), write)


def command_table(conninfo: str, write: bool, why: str | None) -> Outcome:
    """The command reference's table, from each command's ``reference`` declaration
    (``sqltools.command_table``); needs no database."""
    from . import command_table as generator

    found = generator.problems(generator.declarations())
    if found:
        return Outcome(found, stale=True)
    return _files(generator.rendered(), write)


def _files(wanted: dict[Path, str], write: bool) -> Outcome:
    """Compare generated files with what they should hold; write the stale ones if asked."""
    stale = [path for path, text in wanted.items() if path.read_text(encoding="utf-8") != text]
    if write:
        for path in stale:
            path.write_text(wanted[path], encoding="utf-8")
        return Outcome([f"wrote {_shown(p)}" for p in stale] or ["up to date"])
    return Outcome([f"stale: {_shown(p)}" for p in stale] or ["up to date"], stale=bool(stale))


def settings_table(conninfo: str, write: bool, why: str | None) -> Outcome:
    """The worker guide's table of consumer settings (``sqltools.settings_table``);
    needs no database."""
    from . import settings_table as generator

    return _files(generator.rendered(), write)


def catalogue(conninfo: str, write: bool, why: str | None) -> Outcome:
    """locale/django.pot, by makemessages (its creation date alone is no change).

    makemessages writes in the folder it runs in, so it runs in a copy of the package: the
    checkout's catalogue is never half-written or missing while it runs, which CI's two
    test legs, reading and checking one checkout at the same time, rely on."""
    if shutil.which("xgettext") is None:
        return Outcome(["skipped: GNU gettext (xgettext) is not installed"])
    before = CATALOGUE.read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="pgmq-catalogue-") as scratch:
        copy = Path(scratch) / PACKAGE.name
        shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "*.mo"))
        subprocess.run(
            [sys.executable, "-m", "django", "makemessages", "-l", "en", "--keep-pot",
             "--no-location", "-v", "0"],
            cwd=copy,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
            check=True,
        )  # fmt: skip
        after = (copy / "locale" / CATALOGUE.name).read_text(encoding="utf-8")
    changed = _CREATED.sub("", before) != _CREATED.sub("", after)
    if not changed:
        return Outcome(["up to date"])
    if write:
        CATALOGUE.write_text(after, encoding="utf-8")
        return Outcome(
            [f"wrote {_shown(CATALOGUE)}: merge and translate the .po (CONTRIBUTING.md)"]
        )
    return Outcome([f"stale: {_shown(CATALOGUE)}"], stale=True)


def command_reference(conninfo: str, write: bool, why: str | None) -> Outcome:
    """The command reference, made at each docs build: it must render."""
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_commands.py")],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return Outcome([f"does not render: {done.stderr.strip().splitlines()[-1:]}"], stale=True)
    return Outcome(["made at each docs build (docs/hooks.py); it renders"])


GENERATORS = (
    Generator("migrations", migrations),
    Generator("attributes", attributes),
    Generator("consumer settings", settings_table),
    Generator("translation catalogue", catalogue),
    Generator("command table", command_table),
    Generator("command reference", command_reference),
)


def _shown(path: Path) -> str:
    return str(path.relative_to(ROOT)) if path.is_relative_to(ROOT) else str(path)


def regenerate(conninfo: str, *, write: bool, why: str | None = None) -> list[tuple[str, Outcome]]:
    """Run every generator, in order (the catalogue after the attribute module it reads)."""
    return [(g.name, g.run(conninfo, write, why)) for g in GENERATORS]


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``python -m django_pgmq.sqltools.regenerate``."""
    parser = argparse.ArgumentParser(
        prog="python -m django_pgmq.sqltools.regenerate", description=__doc__.split("\n")[0]
    )
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 if stale")
    parser.add_argument("--why", help="what the SQL change is for: makes its migration")
    parser.add_argument("--database", help="Django database alias (default: PGMQ['DATABASE'])")
    args = parser.parse_args(argv)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
    sys.path.insert(0, str(ROOT))
    import django
    from django.apps import apps

    if not apps.ready:
        django.setup()
    from . import migrate

    results = regenerate(migrate.server_conninfo(args.database), write=not args.check, why=args.why)
    for name, outcome in results:
        for line in outcome.lines:
            print(f"{name}: {line}")
    return 1 if any(outcome.stale for _name, outcome in results) else 0


if __name__ == "__main__":
    sys.exit(main())
