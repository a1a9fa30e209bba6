"""``PGMQ["SCHEDULES"]``: periodic schedules declared in settings, kept in step with the database.

Each entry is a schedule by name::

    PGMQ = {"SCHEDULES": {
        "nightly-report": {"cron": "0 3 * * *", "queue": "reports", "message": {"kind": "daily"},
                           "time_zone": "Europe/Berlin", "catch_up": 600},
        "cleanup": {"cron": "@every 5 minutes", "task": "shop.tasks.cleanup"},
    }}

`sync_schedules` applies them (``migrate`` does, through ``post_migrate``, and so does
every worker at start): each is created or replaced, its queue created when
missing, and marked as declared in settings; a schedule that settings declared
before and no longer do is disabled (and unmarked), never left running or deleted.
A ``task`` entry enqueues a Django task of a ``django_pgmq.tasks.PgmqBackend``: its
message carries the task path and arguments, and the worker makes the result row.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured
from django.core.management.base import CommandError
from django.db import transaction

from . import conf, routing
from .cron import check_cron, check_time_zone
from .errors import PgmqError, first_line
from .internal import InternalManager
from .manager import QueueManager
from .manager.schedule_ops import DEFAULT_CATCH_UP, as_catch_up, default_time_zone
from .names import validate_queue_name

KEYS = ("cron", "queue", "message", "headers", "time_zone", "catch_up", "enabled")
TASK_KEYS = ("task", "args", "kwargs", "backend")


@dataclass(frozen=True)
class Declared:
    """One schedule of ``PGMQ["SCHEDULES"]``, resolved: what `create_schedule` takes."""

    name: str
    cron: str
    queue: str
    message: Any
    headers: dict[str, Any] | None
    time_zone: str
    catch_up: timedelta
    enabled: bool
    database: str
    backend: Any = None  # the PgmqBackend of a task schedule (it prepares the queue)


@dataclass(frozen=True)
class SyncResult:
    """What `sync_schedules` did on one database."""

    applied: list[str]
    disabled: list[str]


def declared(raw: Mapping[str, Any] | None = None) -> list[Declared]:
    """The schedules settings declare; ImproperlyConfigured listing every problem."""
    entries = conf.get("SCHEDULES") if raw is None else raw
    found, errors = _resolve_all(entries)
    if errors:
        raise ImproperlyConfigured("PGMQ['SCHEDULES']: " + "; ".join(errors))
    return found


def problems(raw: Mapping[str, Any]) -> list[str]:
    """What is wrong with ``PGMQ["SCHEDULES"]``, one line each (for ``manage.py check``)."""
    return _resolve_all(raw)[1]


def check_schedules(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """``manage.py check``: each problem of ``PGMQ["SCHEDULES"]`` (django_pgmq.E007);
    registered by the app's ``ready`` (a wrong type is conf's E005)."""
    raw = getattr(settings, "PGMQ", {})
    if not isinstance(raw, dict) or not isinstance(raw.get("SCHEDULES"), dict):
        return []
    return [
        checks.Error(text, hint="see the Schedules guide", id="django_pgmq.E007")
        for text in problems(raw["SCHEDULES"])
    ]


def _resolve_all(raw: Mapping[str, Any]) -> tuple[list[Declared], list[str]]:
    found, errors = [], []
    for name, entry in raw.items():
        try:
            found.append(_resolve(name, entry))
        except (ValueError, TypeError, ImportError, ImproperlyConfigured, PgmqError) as exc:
            errors.append(f"schedule {name!r}: {exc}")
    return found, errors


def resolve(name: Any, entry: Any) -> Declared:
    """One schedule entry (as in settings, or from the admin's form), resolved and checked.

    ValueError, TypeError, ImportError or ImproperlyConfigured say what is wrong.
    """
    return _resolve(name, entry)


def apply(manager: QueueManager, item: Declared) -> None:
    """Create or replace one resolved schedule, making its queue first when missing."""
    if item.backend is not None:
        item.backend.prepare_queue(item.queue)
    else:
        manager.create_queue(item.queue)
    manager.create_schedule(
        item.name,
        item.cron,
        item.queue,
        item.message,
        headers=item.headers,
        time_zone=item.time_zone,
        catch_up=item.catch_up,
        enabled=item.enabled,
    )


def _resolve(name: Any, entry: Any) -> Declared:
    if not isinstance(name, str) or not 1 <= len(name) <= 200:
        raise ValueError("the name must be a string of 1 to 200 characters")
    if not isinstance(entry, Mapping):
        raise TypeError(f"must be a dict, got {type(entry).__name__}")
    unknown = sorted(set(entry) - set(KEYS) - set(TASK_KEYS))
    if unknown:
        raise ValueError(
            f"unknown key(s) {', '.join(unknown)} (known: {', '.join(KEYS + TASK_KEYS)})"
        )
    cron = entry.get("cron")
    if not isinstance(cron, str) or not cron.strip():
        raise ValueError(f"'cron' must be a cron expression, got {cron!r}")
    check_cron(cron)  # the SQL's rules and words (django_pgmq.cron), before any database
    time_zone = entry.get("time_zone") or default_time_zone()
    if not isinstance(time_zone, str):
        raise TypeError(f"'time_zone' must be an IANA time zone name, got {time_zone!r}")
    check_time_zone(time_zone)
    enabled = entry.get("enabled", True)
    if not isinstance(enabled, bool):
        raise TypeError(f"'enabled' must be True or False, got {enabled!r}")
    headers = entry.get("headers")
    if headers is not None and not isinstance(headers, dict):
        raise TypeError(f"'headers' must be a dict, got {type(headers).__name__}")
    common: dict[str, Any] = {
        "name": name,
        "cron": cron,
        "time_zone": time_zone,
        "catch_up": as_catch_up(entry.get("catch_up", DEFAULT_CATCH_UP)),
        "enabled": enabled,
    }
    if "task" in entry:
        if "message" in entry:
            raise ValueError("give 'task' (with 'args' and 'kwargs') or 'message', not both")
        return _resolve_task(entry, headers, common)
    stray = sorted(set(entry) & {"args", "kwargs", "backend"})
    if stray:
        raise ValueError(f"{', '.join(stray)} go(es) with 'task'")
    queue = entry.get("queue")
    if not isinstance(queue, str):
        raise ValueError(f"'queue' must name a queue, got {queue!r}")
    message = entry.get("message", {})
    json.dumps(message, allow_nan=False)  # TypeError/ValueError name what is not JSON
    queue = validate_queue_name(queue)
    return Declared(
        queue=queue,
        message=message,
        headers=headers,
        database=routing.database_for(queue),  # a schedule lives in its queue's database
        **common,
    )


def _resolve_task(
    entry: Mapping[str, Any], headers: dict | None, common: dict[str, Any]
) -> Declared:
    """A task schedule: the task's queue and backend, a message the worker runs."""
    from .tasks.results import load_task
    from .tasks.worker_settings import backend_named

    path = entry["task"]
    if not isinstance(path, str):
        raise TypeError(f"'task' must be a dotted path, got {path!r}")
    task = load_task(path)
    args, kwargs = entry.get("args", []), entry.get("kwargs", {})
    if not isinstance(args, list | tuple) or not isinstance(kwargs, dict):
        raise TypeError("'args' must be a list and 'kwargs' a dict")
    message = {"task": task.module_path, "args": list(args), "kwargs": dict(kwargs)}
    json.dumps(message, allow_nan=False)
    backend = backend_named(entry.get("backend") or task.backend)  # a PgmqBackend, or why not
    priority = {"priority": task.priority} if task.priority else {}
    queue = validate_queue_name(entry.get("queue") or task.queue_name)
    return Declared(
        queue=queue,
        message=message,
        headers={**priority, **(headers or {})} or None,
        database=backend.database_for(queue),
        backend=backend,
        **common,
    )


def sync_schedules(using: str | None = None) -> SyncResult:
    """Apply ``PGMQ["SCHEDULES"]`` to one database, in one transaction (see the module)."""
    using = using or conf.database_alias()
    mine = [d for d in declared() if d.database == using]
    manager = InternalManager(using)
    with transaction.atomic(using=using):
        for item in mine:
            apply(manager, item)
        names = [d.name for d in mine]
        manager.set_schedule_origin(names, "settings")
        removed = [name for name in manager.settings_schedule_names() if name not in names]
        for name in removed:
            manager.enable_schedule(name, False)
        manager.set_schedule_origin(removed, None)
    return SyncResult(applied=names, disabled=removed)


def schedules_installed(using: str) -> bool:
    """Whether the database has the schedules' tables (migrated far enough)."""
    return conf.is_postgresql(using) and InternalManager(using).schedules_installed()


def apply_after_migrate(using: str = "default", verbosity: int = 1, **kwargs: Any) -> None:
    """``post_migrate``: apply the settings' schedules to the database just migrated."""
    if not schedules_installed(using):
        return  # migrated back before schedules existed, or not a pgmq database
    try:
        done = sync_schedules(using)
    except (ImproperlyConfigured, PgmqError) as exc:  # what check reports: one line, no trace
        raise CommandError(f"migrated, but {first_line(exc)}") from exc
    if verbosity > 0 and (done.applied or done.disabled):
        print(
            f"  pgmq schedules: {len(done.applied)} applied, {len(done.disabled)} disabled"
            + (f" ({', '.join(done.disabled)})" if done.disabled else "")
        )
