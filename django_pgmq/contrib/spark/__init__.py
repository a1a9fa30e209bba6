"""Spark integration: the ``pgmq`` PySpark data source and the pipeline jobs.

Needs the ``spark`` extra (``pip install 'django-pgmq[spark]'``: PySpark 4.2+,
pyarrow). The source runs on executors without Django: plain psycopg, SQL from
``sql/queries.sql`` (its Spark section) composed with ``psycopg.sql``. Importing this package
does not import PySpark; its names load on first use.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "PgmqDataSource": "source",
    "get_session": "session",
    "ensure_registered": "session",
    "ConnectionInfo": "conninfo",
    "from_django": "conninfo",
    "from_string": "conninfo",
    "spark_options": "conninfo",
}


def require() -> None:
    """Raise a clear ImportError unless PySpark and pyarrow are installed."""
    try:
        import pyarrow  # noqa: F401
        import pyspark  # noqa: F401
    except ImportError as exc:
        raise ImportError(
            "the Spark integration needs the 'spark' extra: "
            f"pip install 'django-pgmq[spark]' ({exc})"
        ) from exc


def __getattr__(name: str) -> Any:
    if name not in _EXPORTS:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    require()
    from importlib import import_module

    return getattr(import_module(f"{__name__}.{_EXPORTS[name]}"), name)


__all__ = sorted(_EXPORTS)
