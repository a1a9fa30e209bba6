"""Generate the command reference's table "What they print and when they fail" from the
commands' own declarations (developer tooling).

Each command declares, beside its ``help``, a ``reference``: a ``ReferenceRow`` (how it is
called, what it prints, when it fails) or a ``GuidePointer`` (the guide that explains it);
``management/reference.py`` says what each holds. The table, one row per command by name,
and the paragraph under it naming the commands a guide explains, are the generated region
of docs/reference/commands.md, written by ``python -m django_pgmq.sqltools.regenerate``
and compared by its ``--check``. The rest of that page, each command's ``--help``, is made
at each docs build (``docs/gen_commands.py``).
"""

from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

from ..management.reference import GuidePointer, ReferenceRow
from . import regions

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "reference" / "commands.md"
COMMANDS = ROOT / "django_pgmq" / "management" / "commands"
REGION = "command table"
HEADER = ["| command | prints | fails (exit 1) when |", "|---|---|---|"]

Declaration = ReferenceRow | GuidePointer


def command_names() -> list[str]:
    """The app's management commands, sorted by name."""
    return sorted(m.name for m in pkgutil.iter_modules([str(COMMANDS)]))


def declarations() -> dict[str, object]:
    """Each command's ``Command.reference`` (None when it declares none), by name."""
    found: dict[str, object] = {}
    for name in command_names():
        module = importlib.import_module(f"django_pgmq.management.commands.{name}")
        found[name] = getattr(module.Command, "reference", None)
    return found


def problems(declared: dict[str, object]) -> list[str]:
    """What keeps the declarations from making the table, one line naming each command."""
    found = []
    for name, reference in declared.items():
        if isinstance(reference, ReferenceRow):
            if not cell(reference.usage).startswith((f"`{name} ", f"`{name}`")):
                found.append(f"{name}: its usage must start with `{name}` in backticks")
            if not reference.prints.strip():
                found.append(f"{name}: its row says nothing of what it prints")
            cells = (reference.usage, reference.prints, reference.fails)
            if any("|" in text for text in cells):
                found.append(f"{name}: a '|' would split its table cell; write 'or' or '/'")
        elif isinstance(reference, GuidePointer):
            if not (reference.topic.strip() and reference.link.startswith("[")):
                found.append(f"{name}: its guide needs a topic and a Markdown link")
        else:
            found.append(
                f"{name}: Command declares no `reference`: a ReferenceRow (what it prints, "
                "when it fails) or a GuidePointer (the guide that explains it), beside `help`"
            )
    return found


def cell(text: str) -> str:
    """A declared text as one table cell or sentence: its whitespace runs made one space."""
    return " ".join(text.split())


def render(declared: dict[str, Declaration]) -> str:
    """The generated region: the table, then the sentence naming the guides."""
    lines = list(HEADER)
    guides: dict[GuidePointer, list[str]] = {}
    for name in sorted(declared):
        reference = declared[name]
        if isinstance(reference, GuidePointer):
            guides.setdefault(reference, []).append(name)
        else:
            texts = (reference.usage, reference.prints, reference.fails)
            lines.append("|" + "|".join(f" {cell(t)} " if t.strip() else " " for t in texts) + "|")
    if guides:
        parts = [
            f"for {cell(guide.topic)} ({', '.join(f'`{n}`' for n in names)})"
            + (" see " if i == 0 else ", ")
            + cell(guide.link)
            for i, (guide, names) in enumerate(guides.items())
        ]
        sentence = "; ".join(parts)
        lines += ["", sentence[0].upper() + sentence[1:] + "."]
    return "\n".join(lines) + "\n"


def rendered() -> dict[Path, str]:
    """What the page should hold, from the commands' declarations (which must be whole:
    ``problems`` first)."""
    declared = {n: r for n, r in declarations().items() if isinstance(r, Declaration)}
    return {PAGE: regions.with_region(PAGE.read_text(encoding="utf-8"), REGION, render(declared))}
