"""The SQL a migration ran when it was released, kept beside it in ``migrations/sql/``.

A migration reads its own frozen file, never the live files in ``django_pgmq/sql/``,
so a database installed by an old release and a fresh one replay the same history.
The leading underscore keeps Django's migration loader from taking this for a migration.
"""

from __future__ import annotations

from importlib.resources import files


def read(filename: str) -> str:
    """The text of ``django_pgmq/migrations/sql/<filename>``, exactly as released.

    Read beside this module, so that a copy of the package (a squash's test) reads its own.
    """
    package = __name__.rpartition(".")[0]
    return files(package).joinpath("sql", filename).read_text(encoding="utf-8")
