"""A second real PostgreSQL server (an embedded cluster in a temporary folder) as alias "second".

The tests of queues over several databases route queues named ``second_*`` to it.
The server is started by the fixture and stopped after; `SecondServer.stop` and
`start` take it down and bring it back (same folder, same socket) while a test runs.
The alias uses Django's plain PostgreSQL backend, so nothing restarts the server
behind the test's back.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.core.management import call_command
from django.db import connections

from django_pgmq import embedded

ROOT = Path(__file__).resolve().parents[1]
ALIAS = "second"
NAME = "pgmq_second"
ROUTES = [("second_*", ALIAS)]
EMPTY = "empty"  # an alias of a database on the second server where nothing is migrated


@dataclass
class SecondServer:
    """The second server's data folder and its ``DATABASES`` entry."""

    data_dir: Path
    entry: dict[str, Any]

    def stop(self) -> None:
        """Take the server down (fast shutdown: sessions are cut)."""
        for alias in (ALIAS,):
            connections[alias].close()
        assert embedded.stop(self.data_dir), "the second server was not running"

    def start(self) -> None:
        """Bring the server back, on the same socket (from a fresh process: the embedded
        package remembers, per process, a server it started as running)."""
        command = [sys.executable, "-m", "django_pgmq.embedded", "start", str(self.data_dir)]
        dsn = subprocess.run(command, check=True, capture_output=True, text=True).stdout
        assert f"host={self.entry['HOST']}" in dsn

    def env(self, base: dict[str, str]) -> dict[str, str]:
        """A subprocess environment whose settings add this alias and route ``second_*`` to it."""
        return {
            **base,
            "DJANGO_SETTINGS_MODULE": "tests.two_servers_settings",
            "PGMQ_SECOND_DATABASE": json.dumps(self.entry),
        }


def add_alias(alias: str, entry: dict[str, Any]) -> None:
    """Make ``alias`` known to Django's connections (and settings) for the rest of the run."""
    filled = {**entry}
    # Fills in Django's defaults (it insists on a "default" entry beside).
    connections.configure_settings(
        {"default": dict(connections.settings["default"]), alias: filled}
    )
    connections.settings[alias] = filled
    settings.DATABASES[alias] = filled


def remove_alias(alias: str) -> None:
    """Forget ``alias`` again (closing its connection); nothing if it was never added."""
    if alias not in connections.settings:
        return
    connections[alias].close()
    connections.settings.pop(alias, None)
    settings.DATABASES.pop(alias, None)
    if hasattr(connections._connections, alias):  # the wrapper of this thread
        delattr(connections._connections, alias)


@pytest.fixture(scope="module")
def second_server(django_db_setup, django_db_blocker) -> Iterator[SecondServer]:
    """A second PostgreSQL server as alias "second", migrated (django_pgmq and the rest)."""
    data_dir = ROOT / ".pgdata" / f"second_{uuid.uuid4().hex[:8]}" / "data"
    params = embedded.connection_params(data_dir, NAME)
    entry = {
        "ENGINE": "django.db.backends.postgresql",
        "NAME": NAME,
        "USER": params["user"],
        "HOST": params["host"],
        "PORT": str(params["port"]),
    }
    try:
        add_alias(ALIAS, entry)
        embedded.connection_params(data_dir, "pgmq_empty")  # created, never migrated
        add_alias(EMPTY, {**entry, "NAME": "pgmq_empty"})
        with django_db_blocker.unblock():
            # Every app, not only django_pgmq: the flushes after transactional tests need them.
            call_command("migrate", database=ALIAS, verbosity=0)
        yield SecondServer(data_dir, entry)
    finally:
        remove_alias(ALIAS)
        remove_alias(EMPTY)
        embedded.stop(data_dir)
        shutil.rmtree(data_dir.parent, ignore_errors=True)
