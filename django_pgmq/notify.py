"""Insert notifications as a django-pgtrigger trigger, on run-time models of the queue tables.

The trigger is defined once, here (`NotifyInsertTrigger`). ``pgmq.enable_notify_insert``
(sql/40_notify.sql), which clients in any language call, installs exactly the same
trigger: same name, function, definition and comment. So `manage.py pgtrigger ls`
shows it INSTALLED whichever path put it there, ``install`` re-creates it unchanged,
and ``prune`` never takes it (its name does not start with ``pgtrigger_``).

pgtrigger only manages triggers it finds in its registry, so every queue with
notifications on gets an unmanaged model at run time (`queue_model`). Which queues
have them is in the database, and reading it at start-up would break ``migrate`` on
a fresh database; the registry is therefore filled lazily, when ``manage.py
pgtrigger`` starts (`hook_pgtrigger_command`), or by calling `register_queue_triggers`.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import re
from typing import Any

import pgtrigger
from django.apps.registry import Apps
from django.db import DEFAULT_DB_ALIAS, DatabaseError, models, transaction
from pgtrigger import compiler
from psycopg import sql as psql

from . import records
from .errors import PgmqError
from .names import table_name, validate_queue_name

logger = logging.getLogger(__name__)

# The trigger's COMMENT, which pgtrigger compares to tell INSTALLED from OUTDATED.
# Change it together with pgmq._notify_trigger_hash() whenever the trigger changes.
NOTIFY_TRIGGER_HASH = "django_pgmq.notify_insert.v1"
NOTIFY_FUNCTION = "pgmq.notify_queue_listeners"


def notify_trigger_name(queue: str) -> str:
    """The trigger's name on ``pgmq.q_<queue>`` (pgtrigger's pgid), as in pgmq._notify_trigger_name.

    Unique per queue, as pgtrigger's registry requires, and a plain identifier
    because pgtrigger writes it unquoted: names with a ``-`` get a hash instead.
    """
    lowered = validate_queue_name(queue).lower()
    if re.fullmatch(r"[a-z0-9_]+", lowered):
        return f"q_{lowered}_notify_insert"
    return "pgmq_notify_" + hashlib.sha256(lowered.encode()).hexdigest()[:20]


class _UpsertNotifyTriggerSql(compiler.UpsertTriggerSql):
    """pgtrigger's install SQL without its per-trigger function.

    The function is ``pgmq.notify_queue_listeners``, shared by every queue and
    owned by the migrations, so installing or uninstalling one queue's trigger
    never touches another's (pgtrigger's uninstall drops only the trigger).
    """

    def get_template(self) -> str:
        return """
            DROP TRIGGER IF EXISTS {pgid} ON {table};
            CREATE {constraint} TRIGGER {pgid}
                {when} {operation} ON {table}
                {timing}
                {referencing}
                FOR EACH {level} {condition}
                EXECUTE FUNCTION {execute};
            COMMENT ON TRIGGER {pgid} ON {table} IS '{hash}';
        """


class NotifyInsertTrigger(pgtrigger.Trigger):
    """pgmq's insert notification: at commit, ``pg_notify('pgmq.q_<name>.INSERT', '')``, throttled.

    A deferred constraint trigger calling ``pgmq.notify_queue_listeners('<name as
    stored>')``; the models it goes on carry that name as ``pgmq_queue_name``.
    """

    name = "notify_insert"
    level = pgtrigger.Row
    when = pgtrigger.After
    operation = pgtrigger.Insert
    timing = pgtrigger.Deferred

    def get_pgid(self, model: Any) -> str:
        return notify_trigger_name(model.pgmq_queue_name)

    def render_execute(self, model: Any) -> str:
        argument = psql.Literal(validate_queue_name(model.pgmq_queue_name)).as_string(None)
        return f"{NOTIFY_FUNCTION}({argument})"

    def compile(self, model: Any) -> compiler.Trigger:
        return compiler.Trigger(
            name=self.name,
            sql=_UpsertNotifyTriggerSql(
                pgid=self.get_pgid(model),
                func="",
                table=model._meta.db_table,
                constraint="CONSTRAINT",
                when=self.when,
                operation=self.operation,
                timing=f"DEFERRABLE INITIALLY {self.timing}",
                level=self.level,
                condition="",
                execute=self.render_execute(model),
                hash=NOTIFY_TRIGGER_HASH,
            ),
        )


NOTIFY_TRIGGER = NotifyInsertTrigger()

# Models made here, by table name. Each lives in its own app registry, so it is
# never seen by makemigrations and a re-created queue can get a fresh one.
_models: dict[str, type[models.Model]] = {}


def queue_model(queue: str) -> type[models.Model]:
    """An unmanaged model on ``pgmq.q_<queue>``; ``queue`` is the name as stored in pgmq.meta."""
    table = table_name(queue)
    model = _models.get(table)
    if model is None or model.pgmq_queue_name != queue:  # type: ignore[attr-defined]
        meta = type(
            "Meta",
            (),
            {
                "app_label": "django_pgmq",
                "db_table": f'pgmq"."{table}',
                "managed": False,
                "apps": Apps(),
            },
        )
        model = type(
            table,
            (models.Model,),
            {
                "__module__": __name__,
                "Meta": meta,
                "msg_id": models.BigIntegerField(primary_key=True),
                "pgmq_queue_name": queue,
            },
        )
        _models[table] = model
    return model


# pgtrigger annotates the model classes its Trigger methods take and its registry holds as
# instances (models.Model); the ``type: ignore`` comments below are for that.


def _registered() -> dict[str, type[models.Model]]:
    """Our run-time models now in pgtrigger's registry, by URI."""
    return {
        NOTIFY_TRIGGER.get_uri(model): model  # type: ignore[misc]
        for model, trigger in pgtrigger.registry.registered()
        if trigger is NOTIFY_TRIGGER
    }


def register_queue_triggers(using: str | None = None) -> list[str] | None:
    """Register the notify trigger of every queue with notifications on in ``using`` with pgtrigger.

    Queues whose notifications went off (or that were dropped) leave the registry.
    Returns the queue names, or None (registry untouched) when the database cannot
    say: unreachable, or not migrated.
    """
    from .manager import QueueManager

    alias = using or DEFAULT_DB_ALIAS
    try:
        with transaction.atomic(using=alias):
            queues = [t.queue_name for t in QueueManager(alias).list_notify_throttles()]
    except (DatabaseError, PgmqError) as exc:
        logger.warning("django_pgmq: queue triggers not registered with pgtrigger: %s", exc)
        return None
    wanted = {
        NOTIFY_TRIGGER.get_uri(queue_model(q)): queue_model(q)  # type: ignore[arg-type]
        for q in queues
    }
    for uri, model in _registered().items():
        if wanted.get(uri) is not model:
            NOTIFY_TRIGGER.unregister(model)  # type: ignore[arg-type]
    current = _registered()
    for uri, model in wanted.items():
        if uri not in current:
            NOTIFY_TRIGGER.register(model)  # type: ignore[arg-type]
    return queues


def install_notify_trigger(queue: str, using: str | None = None) -> None:
    """Install the trigger on ``pgmq.q_<queue>`` through pgtrigger (enable_notify_insert's twin).

    ``queue`` is the name as stored in pgmq.meta. Unlike enable_notify_insert it
    sets no throttle: without a throttle row every commit notifies.
    """
    NOTIFY_TRIGGER.install(queue_model(queue), database=using)  # type: ignore[arg-type]


def hook_pgtrigger_command() -> None:
    """Make ``manage.py pgtrigger`` register the queue triggers of its --database before it runs."""
    from pgtrigger.management.commands import pgtrigger as command

    handle = command.Command.handle
    if getattr(handle, "registers_pgmq_queues", False):
        return

    @functools.wraps(handle)
    def handle_with_queues(self: Any, *args: Any, **options: Any) -> Any:
        register_queue_triggers(options.get("database"))
        return handle(self, *args, **options)

    handle_with_queues.registers_pgmq_queues = True  # type: ignore[attr-defined]
    command.Command.handle = handle_with_queues  # type: ignore[method-assign]  # on purpose


def __getattr__(name: str) -> Any:
    """`NotifyThrottle`, whose home this module was before `django_pgmq.records`: still
    importable from here, with a DeprecationWarning."""
    home = {"NotifyThrottle": ("django_pgmq.records", records.NotifyThrottle)}
    return records._moved(__name__, name, home)
