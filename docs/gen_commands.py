"""Print the command reference (Markdown) from each management command's own ``--help``.

Run by the docs build (``docs/hooks.py``) so the page never goes stale; run it by hand to
see the page: ``python docs/gen_commands.py``. It sets ``DATABASE_URL`` to a host that
never resolves, because importing ``example_project.settings`` without one starts the
embedded PostgreSQL; help text needs no database, and a command that tried to connect
would fail the build instead of quietly needing a server.
"""

from __future__ import annotations

import os
import pkgutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NEVER_CONNECTED = "postgres://docs@never-connected.invalid:5432/docs"


def command_names() -> list[str]:
    """The app's management commands, sorted by name."""
    commands = ROOT / "django_pgmq" / "management" / "commands"
    return sorted(m.name for m in pkgutil.iter_modules([str(commands)]))


def command_help(name: str) -> str:
    """One command's ``--help`` text, as ``manage.py NAME --help`` prints it."""
    from django.core.management import load_command_class

    command = load_command_class("django_pgmq", name)
    return command.create_parser("manage.py", name).format_help().rstrip()


def summary(help_text: str) -> str:
    """The first sentence of a command's description (the line after its usage)."""
    paragraphs = [p for p in help_text.split("\n\n") if p.strip()]
    description = paragraphs[1] if len(paragraphs) > 1 else ""
    return " ".join(description.split()).split(". ")[0].rstrip(".")


def table_cell(text: str) -> str:
    """Text safe inside a Markdown table cell (no HTML tags, no column breaks)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "\\|")


def render() -> str:
    """The whole reference: a table of commands, then each command's help."""
    names = command_names()
    helps = {name: command_help(name) for name in names}
    lines = ["| command | what it does |", "|---|---|"]
    lines += [f"| [`{n}`](#{n}) | {table_cell(summary(helps[n]))} |" for n in names]
    for name in names:
        lines += ["", f"## {name}", "", "```text", helps[name], "```"]
    return "\n".join(lines) + "\n"


def main() -> None:
    os.environ["DJANGO_SETTINGS_MODULE"] = "example_project.settings"
    os.environ["DATABASE_URL"] = NEVER_CONNECTED
    os.environ["COLUMNS"] = "100"  # argparse wraps help at the terminal's width
    sys.path.insert(0, str(ROOT))
    import django

    django.setup()
    sys.stdout.write(render())


if __name__ == "__main__":
    main()
