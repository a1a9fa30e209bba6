"""The backend's connection: start (or reuse) the embedded server, then connect as usual.

Starting it here, not when the settings are read, keeps commands and tests that never
touch the database (``check``, ``makemigrations --check``, ``--help``, the unit tests)
from starting a server.
"""

from __future__ import annotations

from typing import Any

from django.db.backends.postgresql import base

from django_pgmq import embedded

# The database every PostgreSQL server has; Django's test runner connects to it to
# create and drop test databases, so it is never created here.
MAINTENANCE_DATABASE = "postgres"


# (data folder, database) -> the server's parameters, once started and the database made:
# every later connection of the process goes straight to it.
_ready: dict[tuple[str, str], dict[str, Any]] = {}


def _server_for(data_dir: str, name: str) -> dict[str, Any]:
    if (data_dir, name) not in _ready:
        _ready[data_dir, name] = embedded.connection_params(data_dir, name)
    return _ready[data_dir, name]


class DatabaseWrapper(base.DatabaseWrapper):
    """PostgreSQL on the embedded server in ``settings_dict["EMBEDDED_DIR"]``."""

    def get_connection_params(self) -> dict[str, Any]:
        name = self.settings_dict["NAME"] or MAINTENANCE_DATABASE
        started = _server_for(self.settings_dict["EMBEDDED_DIR"], name)
        self.settings_dict.update(
            HOST=started["host"], PORT=str(started["port"]), USER=started["user"]
        )
        return super().get_connection_params()
