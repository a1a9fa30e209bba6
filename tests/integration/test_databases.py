"""Queues over two real PostgreSQL servers: every entry point follows PGMQ["QUEUE_DATABASES"].

The default alias is the test server; alias "second" is a second embedded server
(tests/second_server.py) holding the queues named ``second_*``.
"""

from __future__ import annotations

import io
import uuid

import pytest
from django.core.management import CommandError, call_command
from django.db import connections, transaction
from prometheus_client.parser import text_string_to_metric_families

import django_pgmq as pgmq
from django_pgmq import routing
from django_pgmq.contrib.spark import conninfo
from django_pgmq.errors import CrossDatabaseTransaction, QueueNotFound
from django_pgmq.internal import InternalManager
from django_pgmq.manager import QueueManager
from django_pgmq.tasks.compat import task_backends
from django_pgmq.tasks.runner import TaskRunner
from tests import task_funcs
from tests.second_server import ALIAS, EMPTY, NAME, ROUTES, second_server

from .test_admin_views import login

__all__ = ["second_server"]  # the fixture, used by name

pytestmark = pytest.mark.django_db(
    transaction=True, databases=["default", "second", "other", "empty"]
)

ADMIN = "/admin/django_pgmq/queue/"
METRICS = "/pgmq/metrics"


@pytest.fixture
def routed(settings, second_server):
    """``second_*`` (and the task queue ``emails``) routed to the second server."""
    settings.PGMQ = {"DATABASE": "default", "QUEUE_DATABASES": [*ROUTES, ("emails", ALIAS)]}
    return second_server


@pytest.fixture
def names(routed):
    """A queue on each server: ``first_<hex>`` (default) and ``second_<hex>`` (second)."""
    tag = uuid.uuid4().hex[:10]
    first, second = f"first_{tag}", f"second_{tag}"
    yield first, second
    QueueManager("default").drop_queue(first)
    QueueManager(ALIAS).drop_queue(second)


def queue_names(alias: str) -> set[str]:
    return {q.queue_name for q in QueueManager(alias).list_queues()}


def test_the_module_api_follows_the_routes(names):
    first, second = names
    pgmq.create_queue(first)
    pgmq.create_queue(second)
    assert second in queue_names(ALIAS) and second not in queue_names("default")
    assert first in queue_names("default") and first not in queue_names(ALIAS)
    pgmq.send(second, {"n": 2})
    pgmq.send_batch(first, [{"n": 1}])
    assert [m.message for m in QueueManager(ALIAS).read(second, vt=30, qty=5)] == [{"n": 2}]
    assert [m.message for m in pgmq.read(first, vt=30, qty=5)] == [{"n": 1}]
    # An explicit alias wins over the route.
    with pytest.raises(QueueNotFound):
        QueueManager("default").send(second, {"n": 3})


def test_commands_follow_the_routes_and_database_overrides(names):
    first, second = names
    call_command("pgmq_create", second, stdout=io.StringIO())
    call_command("pgmq_create", first, stdout=io.StringIO())
    call_command("pgmq_send", second, '{"via": "command"}', stdout=io.StringIO())
    assert [m.message for m in QueueManager(ALIAS).pop(second)] == [{"via": "command"}]
    with pytest.raises(CommandError, match=f'queue "{second}" does not exist'):
        call_command("pgmq_send", second, "{}", "--database", "default", stdout=io.StringIO())
    out = io.StringIO()
    call_command("pgmq_list", stdout=out)
    lines = out.getvalue().splitlines()
    assert "database" in lines[0]
    assert any(second in line and ALIAS in line for line in lines)
    assert any(first in line and "default" in line for line in lines)


def test_a_send_inside_a_transaction_on_another_database_is_refused(names, settings):
    first, second = names
    pgmq.create_queue(first)
    pgmq.create_queue(second)
    with transaction.atomic():  # on "default"
        pgmq.send(first, {"joins": True})
        with pytest.raises(CrossDatabaseTransaction, match=f'queue "{second}" lives in'):
            pgmq.send(second, {"refused": True})
        with pytest.raises(CrossDatabaseTransaction):
            pgmq.send_batch(second, [{"refused": True}])
        QueueManager(ALIAS).send(second, {"opted_in": "using"})  # the caller chose the alias
    with transaction.atomic(using=ALIAS):
        pgmq.send(second, {"joins": ALIAS})
    settings.PGMQ = {**settings.PGMQ, "ALLOW_CROSS_DATABASE_SEND": True}
    with transaction.atomic():
        pgmq.send(second, {"opted_in": "setting"})
    sent = [m.message for m in QueueManager(ALIAS).read(second, vt=30, qty=10)]
    assert sent == [{"opted_in": "using"}, {"joins": ALIAS}, {"opted_in": "setting"}]


def test_a_task_queue_is_routed_like_any_other(routed):
    backend = task_backends["default"]
    result = task_funcs.add.enqueue(2, 3)
    [message] = InternalManager(ALIAS).read_by_priority("emails", vt=30, qty=1)
    assert message.message["id"] == result.id
    TaskRunner(backend, "emails").run(message)
    assert backend.get_result(result.id).return_value == 5
    assert "emails" in queue_names(ALIAS)


def test_celery_and_spark_connect_to_the_routed_database(routed, settings):
    from django_pgmq.contrib.celery.database import django_connection_kwargs

    assert dict(conninfo.from_django(None, "second_x").params)["dbname"] == NAME
    default_name = connections["default"].settings_dict["NAME"]
    assert dict(conninfo.from_django(None, "first_x").params)["dbname"] == default_name
    assert django_connection_kwargs()[1] == "default"
    settings.PGMQ = {**settings.PGMQ, "QUEUE_DATABASES": [("celery*", ALIAS)]}
    kwargs, alias = django_connection_kwargs()
    assert (alias, kwargs["dbname"]) == (ALIAS, NAME)


def metric_samples(body: str) -> dict[tuple[str, str, str], float]:
    """(metric, database, queue) -> value; queue "" for per-database metrics."""
    found = {}
    for family in text_string_to_metric_families(body):
        for s in family.samples:
            found[s.name, s.labels.get("database", ""), s.labels.get("queue", "")] = s.value
    return found


def test_prometheus_and_the_admin_show_both_databases_and_one_that_is_down(
    client, names, second_server
):
    first, second = names
    pgmq.create_queue(first)
    pgmq.create_queue(second)
    pgmq.send_batch(second, [{"n": i} for i in range(3)])
    login(client, "view_queue")
    found = metric_samples(client.get(METRICS).content.decode())
    assert found["pgmq_queue_length", ALIAS, second] == 3
    assert found["pgmq_queue_length", "default", first] == 0
    assert found["pgmq_database_up", ALIAS, ""] == 1
    # One list over both databases: the test's tag keeps other tests' queues off the page.
    search = {"q": first.removeprefix("first_")}
    page = client.get(ADMIN, search).content.decode()
    assert f'data-queue="{second}" data-database="{ALIAS}"' in page
    assert f'data-queue="{first}" data-database="default"' in page
    assert f"?db={ALIAS}" in page  # the filter: one database's own overview
    assert client.get(ADMIN, {"db": ALIAS}).status_code == 200

    second_server.stop()
    try:
        found = metric_samples(client.get(METRICS).content.decode())
        assert found["pgmq_database_up", ALIAS, ""] == 0
        assert found["pgmq_database_up", "default", ""] == 1
        assert ("pgmq_queue_length", "default", first) in found
        assert not any(key[1] == ALIAS and key[0] == "pgmq_queue_length" for key in found)
        response = client.get(ADMIN, search)
        assert response.status_code == 200
        page = response.content.decode()
        assert f'class="errornote pgmq-db-down" data-database="{ALIAS}"' in page
        assert f'data-queue="{first}" data-database="default"' in page
    finally:
        second_server.start()
    assert pgmq.metrics(second).queue_length == 3  # back, nothing lost


def test_a_replica_serves_the_read_only_views_but_never_the_producers(client, names, settings):
    _, second = names
    # "other" (a database of the test server) stands in for the second server's replica.
    settings.PGMQ = {**settings.PGMQ, "READ_DATABASE": {ALIAS: "other"}}
    assert routing.read_database(ALIAS) == "other" and routing.read_database("default") == "default"
    QueueManager("other").create_queue(second)  # only "on the replica"
    try:
        QueueManager("other").send(second, {"on": "replica"})
        login(client, "view_queue")
        found = metric_samples(client.get(METRICS).content.decode())
        assert found["pgmq_queue_length", ALIAS, second] == 1  # read from the replica
        page = client.get(ADMIN, {"q": second}).content.decode()  # one list over both
        assert f'data-queue="{second}" data-database="{ALIAS}"' in page
        with pytest.raises(QueueNotFound):  # producers and consumers use the primary
            pgmq.send(second, {"on": "primary"})
        with pytest.raises(QueueNotFound):
            pgmq.read(second, vt=30, qty=1)
    finally:
        QueueManager("other").drop_queue(second)


def test_check_names_a_routed_database_without_django_pgmq(settings, second_server):
    settings.PGMQ = {"QUEUE_DATABASES": [("second_*", ALIAS), ("e_*", EMPTY)]}
    found = routing.check_routed_databases_migrated()
    assert [(w.id, f"{EMPTY!r}" in w.msg) for w in found] == [("django_pgmq.W002", True)]
    assert f"migrate --database {EMPTY}" in found[0].hint


def test_one_worker_runs_task_queues_of_both_databases_until_empty(routed):
    """``pgmq_consume --tasks``: "emails" lives on the second server, "default" on the first."""
    backend = task_backends["default"]
    on_second = [task_funcs.add.enqueue(i, 1) for i in range(3)]
    on_first = [task_funcs.echo.enqueue(i) for i in range(2)]
    assert backend.database_for("emails") == ALIAS and backend.database_for("default") == "default"
    call_command(
        "pgmq_consume",
        "default",
        "emails",
        tasks=True,
        until_empty=True,
        poll_interval=0.05,
        verbosity=0,
    )
    assert [backend.get_result(r.id).return_value for r in on_second] == [1, 2, 3]
    assert [backend.get_result(r.id).return_value for r in on_first] == [0, 1]
    assert InternalManager(ALIAS).metrics("emails").queue_length == 0


def test_max_messages_counts_over_every_database(names):
    first, second = names
    pgmq.create_queue(first)
    pgmq.create_queue(second)
    pgmq.send_batch(first, [{"n": i} for i in range(3)])
    pgmq.send_batch(second, [{"n": i} for i in range(3)])
    call_command(
        "pgmq_consume",
        first,
        second,
        handler="tests.handlers.handle_plain",
        max_messages=4,
        poll_interval=0.05,
        verbosity=0,
    )
    left = pgmq.metrics(first).queue_length + pgmq.metrics(second).queue_length
    assert left == 2


def test_a_queue_declared_in_a_migration_is_created_only_in_its_database(names):
    from django.db.migrations.state import ProjectState

    from django_pgmq.operations import CreateQueue

    _, second = names
    for alias in ("default", ALIAS):  # as `migrate` and `migrate --database second` would
        with connections[alias].schema_editor() as editor:
            CreateQueue(second).database_forwards("demo", editor, ProjectState(), ProjectState())
    assert second in queue_names(ALIAS) and second not in queue_names("default")
