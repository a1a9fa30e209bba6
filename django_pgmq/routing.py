"""Which database holds a queue: ``PGMQ["QUEUE_DATABASES"]``, asked by every part.

The setting is either an ordered list of ``(pattern, alias)`` pairs (shell-style
patterns, matched case-sensitively; the first match wins) or the dotted path of a
router: an object (or a class, instantiated once) with ``db_for_queue(queue_name)``
returning an alias, or None for ``PGMQ["DATABASE"]``. A queue no route names stays
on ``PGMQ["DATABASE"]``. The module API, `QueueManager()` without ``using``, the
commands, the worker, the Tasks backend, the Celery transport, Spark and the admin
all call `database_for`; nothing else reads the setting.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Iterable
from typing import Any

from django.conf import settings
from django.core import checks
from django.core.signals import setting_changed
from django.db import DatabaseError, connections
from django.dispatch import receiver
from django.utils.module_loading import import_string

from . import conf
from .errors import InvalidArgument, first_line

_cache: dict[str, Any] = {}


@receiver(setting_changed)
def _forget(setting: str, **kwargs: Any) -> None:
    """``override_settings(PGMQ=...)`` (and tests) change the routes: read them again."""
    if setting == "PGMQ":
        _cache.clear()


def _routes() -> list[tuple[re.Pattern[str], str]] | Any:
    """The compiled pattern routes, or the router object, or [] (no routing)."""
    if "routes" not in _cache:
        raw = conf.get("QUEUE_DATABASES")
        if isinstance(raw, str):
            router = import_string(raw)
            _cache["routes"] = router() if isinstance(router, type) else router
        else:
            _cache["routes"] = [
                (re.compile(fnmatch.translate(pattern)), alias) for pattern, alias in raw or ()
            ]
    return _cache["routes"]


def database_for(queue: str) -> str:
    """The database alias holding ``queue``: its route, else ``PGMQ["DATABASE"]``."""
    routes = _routes()
    if not routes:
        return conf.database_alias()
    if isinstance(routes, list):
        for pattern, alias in routes:
            if pattern.match(queue):
                return alias
        return conf.database_alias()
    alias = routes.db_for_queue(queue)
    if alias is None:
        return conf.database_alias()
    if alias not in connections.databases:
        raise InvalidArgument(
            f'queue "{queue}": the router {conf.get("QUEUE_DATABASES")} returned database '
            f"alias {alias!r}, which is not in DATABASES"
        )
    return str(alias)


def queue_databases() -> list[str]:
    """Every alias that holds queues: ``PGMQ["DATABASE"]`` first, then each routed one.

    With a router: the aliases in its optional ``databases`` attribute (an iterable);
    a router without it names only ``PGMQ["DATABASE"]`` here.
    """
    routes = _routes()
    if isinstance(routes, list):
        named: Iterable[str] = (alias for _, alias in routes)
    else:
        named = getattr(routes, "databases", ())
    return list(dict.fromkeys([conf.database_alias(), *named]))


def routed_elsewhere(queue: str, alias: str) -> bool:
    """Whether ``alias`` holds queues but ``queue`` is routed to another database.

    A database no route names (and ``PGMQ["DATABASE"]`` without routes) is never
    "elsewhere": migrations that declare queues there keep creating them.
    """
    databases = queue_databases()
    return len(databases) > 1 and alias in databases and database_for(queue) != alias


def read_database(alias: str) -> str:
    """The alias read-only views of ``alias`` read from (``PGMQ["READ_DATABASE"]``).

    ``READ_DATABASE`` is an alias (a replica of ``PGMQ["DATABASE"]``) or a dict from
    a queue database's alias to its replica's. Only the admin's read-only pages and the
    Prometheus export use it; consumers, producers and actions never do.
    """
    replica = conf.get("READ_DATABASE")
    if isinstance(replica, dict):
        return str(replica.get(alias, alias))
    if replica and alias == conf.database_alias():
        return str(replica)
    return alias


@checks.register()
def check_routed_databases_migrated(
    app_configs: Any = None, **kwargs: Any
) -> list[checks.CheckMessage]:
    """Warn, by name, about a database a route names where django_pgmq is not migrated.

    A warning, not an error: ``migrate --database ALIAS`` runs the checks too, and
    must not be stopped by the very thing it is about to fix.
    """
    from django.db.migrations.recorder import MigrationRecorder

    raw = getattr(settings, "PGMQ", {})
    if not isinstance(raw, dict) or not raw.get("QUEUE_DATABASES") or conf.check_settings():
        return []
    warnings: list[checks.CheckMessage] = []
    for alias in queue_databases():
        try:
            applied = MigrationRecorder(connections[alias]).applied_migrations()
        except DatabaseError as exc:
            warnings.append(
                checks.Warning(
                    f"queue database {alias!r} could not be checked: {first_line(exc)}",
                    id="django_pgmq.W003",
                )
            )
            continue
        if not any(app == "django_pgmq" for app, _ in applied):
            warnings.append(
                checks.Warning(
                    f"queue database {alias!r} (named by PGMQ['QUEUE_DATABASES']) does not have "
                    "django_pgmq migrated",
                    hint=f"run: manage.py migrate --database {alias}",
                    id="django_pgmq.W002",
                )
            )
    return warnings
