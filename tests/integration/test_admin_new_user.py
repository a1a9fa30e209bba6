"""What a new user hit in the admin: the poison card's read count, the limits under the
in-flight figure, the schedule form's cron error, the database selector, German pages
(task results, refusals, numbers) and the breadcrumbs' markup. The layout at 1280 x 800
is checked in Chromium (tests/acceptance/test_browser_new_user.py)."""

from __future__ import annotations

import re
import uuid

import pytest
from django.contrib.auth.models import Permission
from django.template import Engine
from django.utils import timezone

from django_pgmq.models import QueueConfig, TaskResultRecord

from .test_admin_views import ADMIN, ALL_PERMS, login, page, text

SCHEDULES = ADMIN + "schedules/"


@pytest.fixture
def operator(client, db):
    login(client, *ALL_PERMS)
    return client


def poison_card(client, queue: str) -> str:
    found = re.search(r"\(read ≥ (\d+)\u00d7\)", text(client.get(page(queue))))
    assert found, "no poison card"
    return found.group(1)


def test_the_poison_card_counts_against_the_queues_own_max_receive_count(
    operator, queue, manager, internal
):
    assert poison_card(operator, queue) == "5"  # neither attribute nor QueueConfig: the default
    manager.set_queue_attributes(queue, max_receive_count=3, dead_letter_queue=f"{queue}_dead")
    assert poison_card(operator, queue) == "3"
    QueueConfig.objects.create(queue=queue, max_receive_count=7)  # the attribute still wins
    assert poison_card(operator, queue) == "3"
    manager.send(queue, {"n": 1})
    for _ in range(3):
        manager.read(queue, vt=0, qty=1)
    row = text(operator.get(ADMIN))
    assert "poison messages" in row  # read three times: poison by the queue's own rule
    scrape = internal.prometheus_scrape(exact_limit=1000, default_max_receive_count=5)
    [scraped] = [q for q in scrape.queues if q.stats.queue_name == queue]
    assert scraped.stats.poison_length == 1  # Prometheus counts by the same rule
    assert scraped.dead_letter == f"{queue}_dead"
    manager.set_queue_attributes(queue, max_receive_count=None, dead_letter_queue=None)
    assert poison_card(operator, queue) == "7"  # then the worker's QueueConfig


def test_the_limits_under_the_in_flight_figure_are_apart(operator, queue, manager):
    manager.set_queue_attributes(queue, max_in_flight=2, rate_limit={"count": 10, "seconds": 60})
    manager.send_batch(queue, [{"n": i} for i in range(8)])
    manager.read(queue, vt=30, qty=2)
    html = operator.get(ADMIN).content.decode()
    limits = re.search(r'<div class="pgmq-muted pgmq-limits">(.*?)</div>', html).group(1)
    spans = re.findall(r"<span[^>]*>(.*?)</span>", limits)
    assert spans == ["limit 2", "rate 2/10 per 60 s"]  # each a line of its own (CSS: block)


def schedule_form(**changes: str) -> dict[str, str]:
    form = {
        "action": "save",
        "cron": "*/5 * * * *",
        "queue": "",
        "message": "{}",
        "headers": "",
        "time_zone": "UTC",
        "catch_up": "0",
        "enabled": "on",
    }
    return {**form, **changes}


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [("cron", "61 * * * *", "61 is out of range"), ("time_zone", "Mars/Base", "unknown time zone")],
)
def test_a_bad_cron_or_zone_is_shown_once_on_its_field(
    operator, queue, internal, field, value, words
):
    name = f"s_{uuid.uuid4().hex[:8]}"
    internal.create_schedule(name, "*/5 * * * *", queue, {"n": 1})
    response = operator.post(
        f"{SCHEDULES}{name.replace('_', '_5F')}/edit/", schedule_form(queue=queue, **{field: value})
    )
    assert response.status_code == 200
    form = response.context["form"]
    assert list(form.errors) == [field] and words in form.errors[field][0]
    assert response.content.decode().count(words) == 1
    assert internal.get_schedule(name).cron == "*/5 * * * *"  # nothing saved


@pytest.mark.django_db(databases=["default", "other"])
def test_the_database_selector_says_what_is_shown(operator, settings, queue):
    settings.PGMQ = {"DATABASE": "default", "QUEUE_DATABASES": [("routed_*", "other")]}
    for address in (ADMIN, SCHEDULES):
        every = operator.get(address).content.decode()
        assert "pgmq-db-filter" not in every  # no second line saying the opposite
        assert re.search(r'<option value="" selected>all</option>', every)
        assert '<option value="default">' in every
        assert operator.get(address, {"db": ""}).context["showing_all"]  # the selector's "all"
        one = operator.get(address, {"db": "other"}).content.decode()
        assert '<option value="other" selected>' in one and '<option value="">all' in one
    # The default database's own overview: its sort links and search stay on it.
    default = operator.get(ADMIN, {"db": "default"}).content.decode()
    assert '<option value="default" selected>' in default
    assert re.search(r'href="[^"]*db=default[^"]*" id="pgmq-sort-queue_length"', default)
    assert '<input type="hidden" name="db" value="default">' in default


def test_german_pages_say_refusals_and_numbers_in_german(operator, queue, manager, settings):
    settings.LANGUAGE_CODE = "de"
    manager.set_queue_attributes(queue, max_message_size=64)
    too_large = '{"text": "' + "x" * 100 + '"}'
    response = operator.post(page(queue, "send/"), {"message": too_large, "delay": "0"})
    html = text(response)
    assert "Die Datenbank hat einen Wert abgelehnt." in html  # then the SQL's own text
    assert "max_message_size" in html
    overview = text(operator.get(ADMIN))
    assert "50.000" in overview and "50,000" not in overview  # the exact-count limit


def test_the_task_results_admin_speaks_german(client, db, settings):
    settings.LANGUAGE_CODE = "de"
    user = login(client, "view_taskresultrecord", "change_taskresultrecord")
    user.user_permissions.add(*Permission.objects.filter(codename="view_queue"))
    TaskResultRecord.objects.create(
        id=uuid.uuid4(),
        backend="default",
        queue_name="q",
        task_path="a.b",
        status="SUCCESSFUL",
        enqueued_at=timezone.now(),
    )
    html = text(client.get("/admin/django_pgmq/taskresultrecord/")).lower()
    for german in ("aufgabenergebnis", "erfolgreich", "aufgabe", "eingereiht", "versuche"):
        assert german in html, german
    for english in ("successful", "task result", "enqueued", "queue name", "attempts"):
        assert english not in html, english


def test_the_dashboard_breadcrumbs_are_the_admins_own_markup(operator):
    """Django 5.2 draws ``<div class="breadcrumbs">``, Django 6 ``<ol class="breadcrumbs">``
    with ``<li>`` items: the dashboard's are whichever the running admin's are."""
    admin_base = Engine.get_default().get_template("admin/base.html").source
    tag = "ol" if '<ol class="breadcrumbs">' in admin_base else "div"
    html = operator.get(SCHEDULES).content.decode()
    crumbs = re.search(r'<(ol|div) class="breadcrumbs">(.*?)</\1>', html, re.S)
    assert crumbs and crumbs.group(1) == tag
    if tag == "ol":
        items = re.findall(r"<li[^>]*>", crumbs.group(2))
        assert len(items) == 3 and 'aria-current="page"' in items[-1]
    else:
        assert crumbs.group(2).count("&rsaquo;") == 2
