"""Operations on every queue (listings, metrics, topics, schedules, the sorted overview)
over two real PostgreSQL servers: routed, they cover both databases and name each row's;
``--database`` / ``using=`` still limits them to one.

The default alias is the test server; alias "second" is a second embedded server
(tests/second_server.py) holding the queues named ``second_*``.
"""

from __future__ import annotations

import io
import json
import re
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from django.core.management import CommandError, call_command
from django.db import connections, transaction
from django.utils import timezone

import django_pgmq as pgmq
from django_pgmq.dashboard import all_databases
from django_pgmq.errors import CrossDatabaseTransaction, InvalidArgument
from django_pgmq.manager import QueueManager
from django_pgmq.models import QueueSample
from tests.second_server import ALIAS, ROUTES, second_server

from .test_admin_views import login

__all__ = ["second_server"]  # the fixture, used by name

pytestmark = pytest.mark.django_db(transaction=True, databases=["default", "second"])

ADMIN = "/admin/django_pgmq/queue/"
SCHEDULES = ADMIN + "schedules/"
AT = datetime(2026, 6, 1, 8, 0, tzinfo=UTC)


@pytest.fixture
def routed(settings, second_server):
    settings.PGMQ = {"DATABASE": "default", "QUEUE_DATABASES": ROUTES}
    return second_server


@pytest.fixture
def tag(routed):
    """A fresh tag; every queue and schedule named with it is dropped after the test."""
    value = uuid.uuid4().hex[:8]
    yield value
    for alias in ("default", ALIAS):
        manager = QueueManager(alias)
        for schedule in manager.list_schedules():
            if value in schedule.name:
                manager.drop_schedule(schedule.name)
        for queue in manager.list_queues():
            if value in queue.queue_name:
                manager.drop_queue(queue.queue_name)
        QueueSample.objects.using(alias).filter(queue__contains=value).delete()


@pytest.fixture
def names(tag):
    """A queue on each server: ``first_<tag>`` (default) and ``second_<tag>`` (second)."""
    first, second = f"first_{tag}", f"second_{tag}"
    pgmq.create_queue(first)
    pgmq.create_queue(second)
    return first, second


def run(*args: str) -> str:
    out = io.StringIO()
    call_command(*args, stdout=out, stderr=io.StringIO())
    return out.getvalue()


# -- list_queues, metrics_all, pgmq_metrics ----------------------------------------------------


def test_list_queues_and_metrics_all_cover_both_databases_unless_one_is_named(names):
    first, second = names
    pgmq.send_batch(second, [{"n": 1}, {"n": 2}])
    listed = {(q.queue_name, q.database) for q in pgmq.list_queues()}
    assert {(first, "default"), (second, ALIAS)} <= listed
    metrics = {m.queue_name: m for m in pgmq.metrics_all()}
    assert (metrics[second].database, metrics[second].queue_length) == (ALIAS, 2)
    assert metrics[first].database == "default"
    assert pgmq.metrics(second).database == ALIAS
    only_second = {q.queue_name for q in QueueManager(ALIAS).list_queues()}
    assert second in only_second and first not in only_second
    assert {m.database for m in QueueManager(ALIAS).metrics_all()} == {ALIAS}


def test_pgmq_metrics_without_names_shows_both_databases_with_their_limits(names):
    first, second = names
    pgmq.send(second, {"n": 1})
    pgmq.set_queue_attributes(second, max_in_flight=5)
    table = run("pgmq_metrics", "--all")
    header = table.splitlines()[0].split()
    assert header[:3] == ["queue", "database", "length"]
    assert re.search(rf"^{second}\s+{ALIAS}\s+1\s", table, re.M)
    assert re.search(rf"^{first}\s+default\s+0\s", table, re.M)
    assert re.search(rf"^{second}\s+{ALIAS}\s+0\s+5\s", table, re.M)  # the limits table
    paged = run("pgmq_metrics", "--limit", "100000")  # the paged form reads both too
    assert re.search(rf"^{second}\s+{ALIAS}\s+1\s", paged, re.M)
    rows = {r["queue_name"]: r for r in json.loads(run("pgmq_metrics", "--all", "--json"))}
    assert rows[second]["database"] == ALIAS and rows[second]["limits"]["max_in_flight"] == 5
    assert rows[first]["database"] == "default" and rows[first]["limits"] is None
    one = json.loads(run("pgmq_metrics", "--all", "--json", "--database", ALIAS))
    assert second in {r["queue_name"] for r in one} and first not in {r["queue_name"] for r in one}
    assert all("database" not in r for r in one)  # one database: rows as before
    named = json.loads(run("pgmq_metrics", second, first, "--json"))
    assert [(r["queue_name"], r["database"]) for r in named] == [
        (second, ALIAS),
        (first, "default"),
    ]
    listing = json.loads(run("pgmq_list", "--json"))
    assert {"queue_name": second, "database": ALIAS}.items() <= next(
        r for r in listing if r["queue_name"] == second
    ).items()


# -- topics ------------------------------------------------------------------------------------


def test_topics_bind_in_each_queues_database_and_a_send_reaches_both(names, tag):
    first, second = names
    key = f"orders.{tag}"
    QueueManager().bind_topic(f"orders.{tag}", first)
    QueueManager().bind_topic("orders.#", second)
    manager = QueueManager()
    bindings = {(b.queue_name, b.database) for b in manager.list_topic_bindings()}
    assert {(first, "default"), (second, ALIAS)} <= bindings
    assert {(b.queue_name, b.database) for b in QueueManager(ALIAS).list_topic_bindings()} == {
        (second, ALIAS)
    }
    assert {(r.queue_name, r.database) for r in manager.test_routing(key)} == {
        (first, "default"),
        (second, ALIAS),
    }
    assert manager.send_topic(key, {"n": 1}) == 2
    delivered = manager.send_batch_topic(key, [{"n": 2}])
    assert {(d.queue_name, d.database) for d in delivered} == {(first, "default"), (second, ALIAS)}
    assert [m.message for m in QueueManager(ALIAS).read(second, vt=30, qty=5)] == [
        {"n": 1},
        {"n": 2},
    ]
    assert QueueManager("default").metrics(first).queue_length == 2
    # --database: that database's bindings only.
    out = run("pgmq_send_topic", key, '{"n": 3}', "--database", "default")
    assert out.split() == [first, out.split()[1]]
    out = run("pgmq_send_topic", key, '{"n": 4}')
    assert {tuple(line.split("\t")[::2]) for line in out.splitlines()} == {
        (first, "default"),
        (second, ALIAS),
    }
    listing = run("pgmq_bind", "--list")
    assert listing.splitlines()[0].split()[:3] == ["pattern", "queue", "database"]
    assert re.search(rf"^orders\.#\s+{second}\s+{ALIAS}\s", listing, re.M)
    dry = run("pgmq_send_topic", key, "--dry-run")
    assert f"{second}\torders.#\t{ALIAS}" in dry.splitlines()


def test_a_topic_send_inside_a_transaction_is_refused_before_anything_is_sent(names, tag, settings):
    first, second = names
    QueueManager().bind_topic(f"a.{tag}", first)
    QueueManager().bind_topic(f"b.{tag}", second)
    with transaction.atomic():  # on "default"
        assert QueueManager().send_topic(f"a.{tag}", {"joins": True}) == 1  # only default
        with pytest.raises(CrossDatabaseTransaction, match=f"database '{ALIAS}'"):
            QueueManager().send_topic(f"b.{tag}", {"refused": True})
    assert QueueManager(ALIAS).metrics(second).queue_length == 0
    assert QueueManager("default").metrics(first).queue_length == 1
    QueueManager().bind_topic(f"b.{tag}", first)
    with transaction.atomic(), pytest.raises(CrossDatabaseTransaction):
        QueueManager().send_batch_topic(f"b.{tag}", [{"refused": True}])
    assert QueueManager("default").metrics(first).queue_length == 1  # default's copy not sent
    settings.PGMQ = {**settings.PGMQ, "ALLOW_CROSS_DATABASE_SEND": True}
    with transaction.atomic():
        assert QueueManager().send_topic(f"b.{tag}", {"opted_in": True}) == 2


# -- schedules ---------------------------------------------------------------------------------


def test_schedules_are_listed_from_both_and_found_by_name_in_either(names, tag):
    first, second = names
    on_first, on_second = f"s1_{tag}", f"s2_{tag}"
    pgmq.create_schedule(on_first, "* * * * *", first, {"db": "default"})
    pgmq.create_schedule(on_second, "* * * * *", second, {"db": ALIAS})
    assert on_second in {s.name for s in QueueManager(ALIAS).list_schedules()}
    assert on_second not in {s.name for s in QueueManager("default").list_schedules()}
    mine = {s.name: s.database for s in pgmq.list_schedules() if tag in s.name}
    assert mine == {on_first: "default", on_second: ALIAS}
    pgmq.enable_schedule(on_second, False)
    assert QueueManager(ALIAS).get_schedule(on_second).enabled is False
    pgmq.enable_schedule(on_second, True)
    msg_id = pgmq.run_schedule_now(on_second)
    assert [m.msg_id for m in QueueManager(ALIAS).read(second, vt=30, qty=5)] == [msg_id]
    for name, alias in ((on_first, "default"), (on_second, ALIAS)):
        with connections[alias].cursor() as cursor:
            cursor.execute(
                "UPDATE pgmq.schedules SET next_tick = %s WHERE schedule_name = %s", [AT, name]
            )
    sent = [
        s
        for s in pgmq.enqueue_due_schedules(at=AT + timedelta(seconds=30))
        if tag in s.schedule_name
    ]
    assert {(s.schedule_name, s.database) for s in sent} == {
        (on_first, "default"),
        (on_second, ALIAS),
    }
    assert [t.tick for t in QueueManager().schedule_ticks(on_second)] == [AT]  # found in second
    assert pgmq.drop_schedule(on_second) is True
    assert pgmq.drop_schedule(on_second) is False
    assert on_second not in {s.name for s in QueueManager(ALIAS).list_schedules()}


def test_a_schedule_name_held_by_both_databases_asks_which(names, tag):
    first, second = names
    dup = f"dup_{tag}"
    QueueManager("default").create_schedule(dup, "@daily", first)
    QueueManager(ALIAS).create_schedule(dup, "@daily", second)
    for call in (
        lambda: pgmq.enable_schedule(dup, False),
        lambda: pgmq.run_schedule_now(dup),
        lambda: pgmq.drop_schedule(dup),
        lambda: QueueManager().get_schedule(dup),
    ):
        with pytest.raises(InvalidArgument, match=f"'default', '{ALIAS}'.*--database ALIAS"):
            call()
    with pytest.raises(CommandError, match=r"several databases.*--database"):
        run("pgmq_schedule", "disable", dup)
    assert "disabled" in run("pgmq_schedule", "disable", dup, "--database", ALIAS)
    assert "enabled" in run("pgmq_schedule", "--database", ALIAS, "enable", dup)
    assert "disabled" in run("pgmq_schedule", "disable", dup, "--database", ALIAS)
    assert QueueManager(ALIAS).get_schedule(dup).enabled is False
    assert QueueManager("default").get_schedule(dup).enabled is True
    # Creating a name another database holds is refused (routed); using= is not checked.
    other = f"other_{tag}"
    pgmq.create_schedule(other, "@daily", first)
    with pytest.raises(InvalidArgument, match="already exists in database 'default'"):
        pgmq.create_schedule(other, "@hourly", second)


def test_pgmq_schedule_lists_both_databases_and_acts_where_the_schedule_is(names, tag):
    _, second = names
    on_second = f"cmd_{tag}"
    out = run("pgmq_schedule", "add", on_second, "@hourly", second)
    assert f"saved in database {ALIAS}" in out
    table = run("pgmq_schedule", "list")
    assert table.splitlines()[0].split()[:5] == ["name", "cron", "zone", "queue", "database"]
    assert re.search(rf"^{on_second}\s+@hourly\s+\S+\s+{second}\s+{ALIAS}\s+yes", table, re.M)
    lines = [json.loads(line) for line in run("pgmq_schedule", "list", "--json").splitlines()]
    assert {"name": on_second, "database": ALIAS}.items() <= next(
        r for r in lines if r["name"] == on_second
    ).items()
    assert "disabled" in run("pgmq_schedule", "disable", on_second)
    assert QueueManager(ALIAS).get_schedule(on_second).enabled is False
    assert "sent message" in run("pgmq_schedule", "run-now", on_second)
    assert QueueManager(ALIAS).metrics(second).queue_length == 1
    one = run("pgmq_schedule", "list", "--database", "default")
    assert on_second not in one and "database" not in one.splitlines()[0]
    assert "removed" in run("pgmq_schedule", "remove", on_second)
    with pytest.raises(CommandError, match="does not exist"):
        run("pgmq_schedule", "remove", on_second)


def test_the_schedules_admin_lists_both_and_each_link_acts_on_its_database(
    client, names, tag, routed
):
    first, second = names
    on_first, on_second, dup = f"a1_{tag}", f"a2_{tag}", f"dup_{tag}"
    pgmq.create_schedule(on_first, "@daily", first)
    pgmq.create_schedule(on_second, "@daily", second)
    QueueManager("default").create_schedule(dup, "@daily", first)
    QueueManager(ALIAS).create_schedule(dup, "@daily", second)
    login(client, "view_queue", "change_queue")
    page = client.get(SCHEDULES).content.decode()
    assert f'data-schedule="{on_second}" data-database="{ALIAS}"' in page
    assert f'data-schedule="{on_first}" data-database="default"' in page
    assert f'data-schedule="{dup}" data-database="default"' in page
    assert f'data-schedule="{dup}" data-database="{ALIAS}"' in page
    link = f"{SCHEDULES}{dup.replace('_', '_5F')}/edit/?db={ALIAS}"
    assert f'href="{link}"' in page
    response = client.post(link, {"action": "disable"})
    assert response.status_code == 302 and response["Location"] == link
    assert QueueManager(ALIAS).get_schedule(dup).enabled is False
    assert QueueManager("default").get_schedule(dup).enabled is True
    # Without ?db=: the one database holding it; two holding it: a 404 saying so.
    bare = f"{SCHEDULES}{on_second.replace('_', '_5F')}/edit/"
    assert client.get(bare).status_code == 200
    client.post(bare, {"action": "run"})
    assert QueueManager(ALIAS).metrics(second).queue_length == 1
    refused = client.get(f"{SCHEDULES}{dup.replace('_', '_5F')}/edit/")
    assert refused.status_code == 404 and "several databases" in refused.content.decode()
    # Only one database: ?db=.
    one = client.get(SCHEDULES, {"db": ALIAS}).content.decode()
    assert on_second in one and on_first not in one
    # A schedule's queue routed to another database than the page's: refused, nothing saved.
    form = {
        "action": "save",
        "cron": "@hourly",
        "queue": second,
        "time_zone": "UTC",
        "catch_up": 60,
    }
    saved = client.post(f"{SCHEDULES}{on_first.replace('_', '_5F')}/edit/?db=default", form)
    assert saved.status_code == 200 and "lives in database" in saved.content.decode()
    assert QueueManager("default").get_schedule(on_first).queue == first
    routed.stop()
    try:
        response = client.get(SCHEDULES)
        assert response.status_code == 200
        page = response.content.decode()
        assert f'class="errornote pgmq-db-down" data-database="{ALIAS}"' in page
        assert f'data-schedule="{on_first}" data-database="default"' in page
        # A command on one database's queues does not need the other database.
        assert "created" in run("pgmq_create", f"first_{tag}_while_down")
    finally:
        routed.start()


# -- the every-database overview, sorted -------------------------------------------------------


def sample(alias: str, queue: str, depth: int, minutes_old: int | None) -> None:
    oldest = None if minutes_old is None else timezone.now() - timedelta(minutes=minutes_old)
    QueueSample.objects.using(alias).create(
        queue=queue,
        queue_length=depth,
        queue_visible_length=depth,
        in_flight_length=0,
        delayed_length=0,
        archive_size=0,
        total_messages=depth,
        oldest_enqueued_at=oldest,
    )


def shown(client, **params: str) -> list[tuple[str, str]]:
    page = client.get(ADMIN, params).content.decode()
    return re.findall(r'data-queue="([^"]+)" data-database="([^"]+)"', page)


def test_the_every_database_overview_sorts_by_every_key_across_both(client, tag, monkeypatch):
    queues = {  # name: (database, sampled depth, minutes since its oldest message)
        f"first_{tag}_a": ("default", 5, 30),
        f"first_{tag}_b": ("default", 1, None),
        f"second_{tag}_c": (ALIAS, 9, 10),
        f"second_{tag}_d": (ALIAS, 3, 60),
    }
    for name, (alias, depth, age) in queues.items():
        QueueManager(alias).create_queue(name)
        sample(alias, name, depth, age)
    login(client, "view_queue")
    a, b, c, d = ((name, alias) for name, (alias, _, _) in queues.items())
    assert shown(client, q=tag) == [a, b, c, d]  # by name
    assert shown(client, q=tag, o="name", dir="desc") == [d, c, b, a]
    assert shown(client, q=tag, o="queue_length") == [c, a, d, b]  # deepest first
    assert shown(client, q=tag, o="queue_length", dir="asc") == [b, d, a, c]
    assert shown(client, q=tag, o="age") == [d, a, c, b]  # oldest first, no message last
    assert shown(client, q=tag, o="age", dir="asc") == [b, c, a, d]
    page = client.get(ADMIN, {"q": tag, "o": "queue_length"}).content.decode()
    [link] = re.findall(r'href="([^"]+)" id="pgmq-sort-queue_length"', page)
    assert (
        "o=queue_length" in link and "dir=asc" in link and "db=" not in link
    )  # this page, reversed
    monkeypatch.setattr(all_databases, "PAGE_SIZE", 3)  # pages over both databases
    assert shown(client, q=tag, o="queue_length", page="2") == [b]
    assert shown(client, q=tag, o="age", page="1") == [d, a, c]
    page = client.get(ADMIN, {"q": tag, "o": "queue_length"}).content.decode()
    assert (
        "page 1 of 2" in page
        and "o=queue_length" in page.split('rel="next"')[0].rsplit("href=", 1)[1]
    )
