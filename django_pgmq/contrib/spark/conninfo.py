"""Where the Spark source connects, without ever showing a password.

The connection comes from the ``dsn`` option (a libpq string or URL, with an
optional ``password`` option, which Spark itself redacts), or, with no ``dsn``,
from the Django settings of the ``database`` alias when the code runs inside
the project. Secrets are split off at once: `ConnectionInfo` prints, pickles
into error texts and logs as host/port/dbname/user only.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from ...errors import InvalidArgument, PgmqError
from ...isolation import own_session_read_committed

SECRET_KEYS = frozenset(
    {"password", "sslpassword", "oauth_client_secret", "scram_client_key", "scram_server_key"}
)
_SHOWN_KEYS = ("host", "port", "dbname", "user")


class ConnectionFailed(PgmqError):
    """PostgreSQL could not be reached with the given connection (message has no secrets)."""


@dataclass(frozen=True)
class ConnectionInfo:
    """A libpq connection without its secrets, plus the secrets kept apart from any text."""

    params: tuple[tuple[str, str], ...]
    secrets: tuple[tuple[str, str], ...] = field(default=(), repr=False, compare=False)

    def __repr__(self) -> str:
        return f"ConnectionInfo({self.safe})"

    __str__ = __repr__

    @property
    def safe(self) -> str:
        """The connection as a user may see it: host, port, dbname and user only."""
        shown = dict(self.params)
        text = " ".join(f"{k}={shown[k]}" for k in _SHOWN_KEYS if shown.get(k))
        return text or "libpq defaults"

    def connect(self, *, autocommit: bool = True) -> psycopg.Connection:
        """Open a psycopg connection; a failure names the server but never a secret."""
        try:
            conn = psycopg.connect(
                make_conninfo(**dict(self.params), **dict(self.secrets)),
                autocommit=autocommit,
                application_name="django-pgmq spark",
            )
        except psycopg.Error as exc:
            raise ConnectionFailed(
                f"cannot connect to PostgreSQL ({self.safe}): {self.redact(str(exc))}"
            ) from None
        # The source claims with SKIP LOCKED: READ COMMITTED whatever the server's default
        # level (at a higher one its reads fail with 40001; django_pgmq/isolation.py).
        return own_session_read_committed(conn)

    def redact(self, text: str) -> str:
        """``text`` with every secret value replaced by ``***``."""
        for _, value in self.secrets:
            if value:
                text = text.replace(value, "***")
        return text.strip()


def from_string(dsn: str, password: str | None = None) -> ConnectionInfo:
    """Parse a libpq string or URL; ``password`` (if given) overrides the one inside."""
    try:
        parsed = conninfo_to_dict(dsn)
    except psycopg.Error:
        # libpq's message may quote part of the string, so it is not repeated here.
        raise InvalidArgument(
            "option 'dsn' is not a valid libpq connection string or postgresql:// URL"
        ) from None
    if password is not None:
        parsed["password"] = password
    return _split({k: str(v) for k, v in parsed.items() if v is not None})


def from_django(alias: str | None = None, queue: str | None = None) -> ConnectionInfo:
    """The connection of a Django database alias; without one, of ``queue``'s database
    (``PGMQ["QUEUE_DATABASES"]``), else of ``PGMQ["DATABASE"]``."""
    from django.db import connections

    from ... import conf, routing

    alias = alias or (routing.database_for(queue) if queue else conf.database_alias())
    if alias not in connections.databases:
        raise InvalidArgument(f"database alias {alias!r} is not in DATABASES")
    params = connections[alias].get_connection_params()
    keywords = {d.keyword.decode() for d in psycopg.pq.Conninfo.get_defaults()}
    return _split(
        {
            k: str(v)
            for k, v in params.items()
            if k in keywords and isinstance(v, str | int) and v != ""
        }
    )


def resolve(options: Mapping[str, str]) -> ConnectionInfo:
    """The connection for data source options: ``dsn``/``password``, else Django settings."""
    if options.get("dsn"):
        return from_string(options["dsn"], options.get("password"))
    if not _django_available():
        raise InvalidArgument(
            "no connection: give option('dsn', 'host=... dbname=...') (and option('password')), "
            "or run inside a Django project (DJANGO_SETTINGS_MODULE) to use its database"
        )
    return from_django(options.get("database"), options.get("queue"))


def spark_options(info: ConnectionInfo) -> dict[str, str]:
    """Options that pass ``info`` to the pgmq source: ``dsn`` plus a Spark-redacted ``password``."""
    options = {"dsn": make_conninfo(**dict(info.params))}
    secrets = dict(info.secrets)
    if "password" in secrets:
        options["password"] = secrets.pop("password")
    if secrets:
        raise InvalidArgument(
            f"connection uses {', '.join(sorted(secrets))}; give it to Spark via a libpq "
            "service file or PGSERVICE rather than an option"
        )
    return options


def _split(params: dict[str, str]) -> ConnectionInfo:
    public = tuple(sorted((k, v) for k, v in params.items() if k not in SECRET_KEYS))
    secret = tuple(sorted((k, v) for k, v in params.items() if k in SECRET_KEYS))
    return ConnectionInfo(public, secret)


def _django_available() -> bool:
    """True when Django settings can be used here, setting Django up if needed."""
    from django.conf import settings

    if not settings.configured and not os.environ.get("DJANGO_SETTINGS_MODULE"):
        return False
    from django.apps import apps

    if not apps.ready:
        import django

        django.setup()
    return True
