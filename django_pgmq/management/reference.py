"""What a command declares for the command reference, beside its ``help``.

The table "What they print and when they fail" of docs/reference/commands.md and the
paragraph under it are generated from these declarations
(``python -m django_pgmq.sqltools.regenerate``), so a new command touches its module and
its test only. The texts are Markdown (links, code spans), each one cell of the table:
line breaks and runs of spaces in them become one space.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ReferenceRow:
    """A command's row in the table: how it is called, what it prints, when it fails."""

    usage: str  # the first cell, starting with the command: "`pgmq_drop QUEUE...`"
    prints: str  # what it writes on stdout
    fails: str = ""  # when it exits with status 1, beyond a missing queue or a bad name


@dataclass(frozen=True)
class GuidePointer:
    """A command a guide explains instead: named under the table, with a link to it."""

    topic: str  # what the guide is about, as the sentence names it: "the worker"
    link: str  # a Markdown link from docs/reference/: "[The worker](../guide/worker.md)"
