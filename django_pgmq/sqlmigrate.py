"""Deprecated path of `django_pgmq.sqltools.migrate`, kept for scripts and habits that
still run ``python -m django_pgmq.sqlmigrate check|make``; it runs the new module."""

from __future__ import annotations

import sys
import warnings
from typing import Any

from .sqltools import migrate as _migrate


def __getattr__(name: str) -> Any:
    return getattr(_migrate, name)


if __name__ == "__main__":
    warnings.warn(
        "python -m django_pgmq.sqlmigrate is deprecated: "
        "use python -m django_pgmq.sqltools.migrate",
        DeprecationWarning,
        stacklevel=1,
    )
    sys.exit(_migrate.main())
