"""The dashboard's pages through Django's test client: overview, queue page, workers."""

from __future__ import annotations

import re
import time
from datetime import timedelta

import pytest
from django.contrib.admin.utils import quote
from django.contrib.auth.models import Permission, User
from django.db import connection
from django.test import Client
from django.utils import timezone

import django_pgmq as pgmq
from django_pgmq.internal import InternalManager
from django_pgmq.manager import QueueManager
from django_pgmq.models import QueueConfig, QueueSample, Worker

ADMIN = "/admin/django_pgmq/queue/"
ALL_PERMS = ("view_queue", "change_queue", "add_queue", "delete_queue", "purge_queue")


def login(client: Client, *codenames: str, staff: bool = True) -> User:
    """Log ``client`` in as a fresh staff user holding exactly ``codenames`` of django_pgmq."""
    # No password: force_login needs none, and hashing one costs a second per test.
    user = User.objects.create(username=f"u{User.objects.count()}", is_staff=staff)
    perms = Permission.objects.filter(content_type__app_label="django_pgmq", codename__in=codenames)
    assert perms.count() == len(codenames), "a permission is missing from the database"
    user.user_permissions.set(perms)
    client.force_login(user)
    return user


def page(queue: str, suffix: str = "change/") -> str:
    """A queue's admin URL; the admin escapes '_' in keys as '_5F'."""
    return f"{ADMIN}{quote(queue)}/{suffix}"


def text(response) -> str:
    """The page's text with tags dropped and spaces collapsed, for reading figures."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.content.decode()))


@pytest.fixture
def manager(db) -> QueueManager:
    """The queue manager, in a test transaction that is rolled back (quicker than a flush)."""
    return QueueManager()


@pytest.fixture
def internal(db) -> InternalManager:
    """The internal layer the admin calls, in the same rolled-back transaction."""
    return InternalManager()


@pytest.fixture
def viewer(client, db) -> Client:
    """A staff client that may only look."""
    login(client, "view_queue")
    return client


@pytest.fixture
def operator(client, db) -> Client:
    """A staff client holding every dashboard permission."""
    login(client, *ALL_PERMS)
    return client


def overview_row(response, queue: str) -> str:
    html = response.content.decode()
    match = re.search(rf'<tr[^>]*data-queue="{re.escape(queue)}".*?</tr>', html, re.S)
    assert match, f"no overview row for {queue}"
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", match.group(0)))


def test_overview_lists_each_queue_with_its_figures(viewer, queue, manager):
    ids = manager.send_batch(queue, [{"n": i} for i in range(4)])
    manager.send(queue, {"later": 1}, delay=3600)
    manager.read(queue, vt=600, qty=1)
    manager.archive(queue, ids[-1])
    response = viewer.get(ADMIN)
    assert response.status_code == 200
    cells = overview_row(response, queue).split()
    # name, depth, visible, in flight, delayed
    assert cells[:5] == [queue, "4", "2", "1", "1"]
    assert f'href="{page(queue)}"' in response.content.decode()


def test_overview_marks_estimates(viewer, queue, manager, settings):
    settings.PGMQ = {**settings.PGMQ, "DASHBOARD_EXACT_LIMIT": 10}
    manager.send_batch(queue, [{"n": i} for i in range(200)])
    with connection.cursor() as cursor:
        cursor.execute(f'ANALYZE pgmq."q_{queue}"')
    row = overview_row(viewer.get(ADMIN), queue)
    assert "≈" in row.split()[1], row


def test_overview_flags_backlog_poison_and_dead_letters(viewer, queue, manager, settings):
    settings.PGMQ = {**settings.PGMQ, "DASHBOARD_BACKLOG_AGE": 0}
    QueueConfig.objects.create(queue=queue, max_receive_count=1, dead_letter_queue=f"{queue}_dead")
    manager.create_queue(f"{queue}_dead")
    try:
        manager.send(f"{queue}_dead", {"dead": 1})
        manager.send_batch(queue, [{"n": 1}, {"n": 2}])
        manager.read(queue, vt=0, qty=1)
        time.sleep(1.1)  # the oldest visible message must have waited over 0 s
        response = viewer.get(ADMIN)
        row = overview_row(response, queue)
        for flag in ("old backlog", "no live worker", "poison messages", "dead letters"):
            assert flag in row
        assert "dead letters of " + queue in overview_row(response, f"{queue}_dead")
    finally:
        manager.drop_queue(f"{queue}_dead")


def test_a_live_worker_clears_the_no_worker_flag(viewer, queue, manager):
    manager.send(queue, {"n": 1})
    Worker.objects.create(
        host="h", pid=1, queues=[queue], expires_at=timezone.now() + timedelta(minutes=1)
    )
    row = overview_row(viewer.get(ADMIN), queue)
    assert "no live worker" not in row


@pytest.mark.django_db(transaction=True, databases=["default", "other"])
def test_overview_of_another_database(client, queue_name):
    login(client, "view_queue")
    other = pgmq.QueueManager("other")
    other.create_queue(queue_name)
    try:
        other.send(queue_name, {"n": 1})
        response = client.get(ADMIN, {"db": "other"})
        assert response.status_code == 200
        assert overview_row(response, queue_name).split()[:2] == [queue_name, "1"]
        assert queue_name not in client.get(ADMIN).content.decode()
    finally:
        other.drop_queue(queue_name)


def test_unknown_database_is_404(viewer):
    assert viewer.get(ADMIN, {"db": "nope"}).status_code == 404


def test_queue_page_shows_messages_with_pretty_json_and_timings(viewer, queue, manager):
    manager.send(queue, {"order": {"id": 7, "items": ["a"]}}, headers={"tenant": "acme"})
    response = viewer.get(page(queue))
    assert response.status_code == 200
    html = response.content.decode()
    assert '"order": {\n    "id": 7' in html.replace("&quot;", '"')
    assert "&quot;tenant&quot;: &quot;acme&quot;" in html
    assert "ago" in text(response)
    assert "<svg" in html  # charts are inline SVG
    assert "http" not in re.sub(r'xmlns="http://www.w3.org/2000/svg"', "", _svgs(html))


def _svgs(html: str) -> str:
    return "".join(re.findall(r'<svg [^>]*class="pgmq-chart".*?</svg>', html, re.S))


def test_queue_page_orders_and_pages(operator, queue, manager):
    ids = manager.send_batch(queue, [{"n": i} for i in range(5)])

    def shown(response) -> list[int]:
        return [int(i) for i in re.findall(r'name="ids" value="(\d+)"', response.content.decode())]

    first = operator.get(page(queue), {"page_size": 25})
    assert shown(first) == ids[::-1]
    oldest = operator.get(page(queue), {"order": "oldest", "page_size": 25})
    assert shown(oldest) == ids
    # Keyset pages: 'after' continues, 'before' goes back.
    second = operator.get(page(queue), {"page_size": 25, "after": ids[2]})
    assert shown(second) == ids[:2][::-1]
    back = operator.get(page(queue), {"page_size": 25, "before": ids[1]})
    assert shown(back) == ids[2:][::-1]


def test_queue_page_next_link(viewer, queue, manager):
    manager.send_batch(queue, [{"n": i} for i in range(30)])
    html = viewer.get(page(queue), {"page_size": 25}).content.decode()
    assert 'rel="next"' in html and 'rel="prev"' not in html
    next_url = re.search(r'href="([^"]+)" rel="next"', html).group(1).replace("&amp;", "&")
    html2 = viewer.get(next_url).content.decode()
    assert html2.count("pgmq-state-") == 5
    assert 'rel="prev"' in html2 and 'rel="next"' not in html2


def test_queue_page_filters(viewer, queue, manager):
    manager.send_batch(
        queue,
        [{"kind": "a"}, {"kind": "b"}, {"kind": "a", "x": 1}],
        headers=[{"tenant": "t1"}, {"tenant": "t2"}, None],
    )
    manager.read(queue, vt=0, qty=1)

    def count(**params) -> int:
        response = viewer.get(page(queue), params)
        assert response.status_code == 200
        return response.content.decode().count("pgmq-state-")

    assert count() == 3
    assert count(contains='{"kind": "a"}') == 2
    assert count(header="tenant") == 2
    assert count(header="tenant", header_value="t2") == 1
    assert count(read_ct=1) == 1
    assert count(read_ct=2) == 0


def test_queue_page_rejects_a_bad_filter_with_a_message(viewer, queue, manager):
    manager.send(queue, {"n": 1})
    response = viewer.get(page(queue), {"contains": "{not json"})
    assert response.status_code == 200
    assert "Not applied (the other filters are): Message contains" in text(response)
    assert "Not valid JSON" in text(response)


def test_one_bad_filter_keeps_the_others_and_names_itself(viewer, queue, manager):
    """A page size not offered must not drop the archive's filter."""
    ids = manager.send_batch(queue, [{"fail": False}, {"fail": True}, {"n": 3}])
    manager.archive(queue, ids[:2])
    response = viewer.get(
        page(queue), {"source": "archive", "contains": '{"fail": false}', "page_size": "20"}
    )
    assert response.status_code == 200
    html = response.content.decode()
    assert html.count("pgmq-state-archived") == 1  # the archive, filtered: one message
    assert "pgmq-state-visible" not in html  # not the live list
    banner = re.search(r'id="pgmq-filter-errors">(.*?)</p>', html, re.S).group(1)
    assert "page_size=20" in banner and "contains" not in banner


def test_queue_page_lists_the_archive(viewer, queue, manager):
    ids = manager.send_batch(queue, [{"n": 1}, {"n": 2}])
    manager.archive(queue, ids[0])
    response = viewer.get(page(queue), {"source": "archive"})
    html = response.content.decode()
    assert html.count("pgmq-state-archived") == 1
    assert "Latency" in html


def test_queue_page_lists_dead_letters(viewer, queue, manager):
    dlq = f"{queue}_dlq"  # the naming convention when no QueueConfig names one
    manager.create_queue(dlq)
    try:
        manager.send_batch(dlq, [{"dead": 1}, {"dead": 2}])
        response = viewer.get(page(queue), {"source": "dlq"})
        assert response.content.decode().count("pgmq-state-visible") == 2
        assert f"Dead letters ({dlq})" in text(response)
    finally:
        manager.drop_queue(dlq)


def test_missing_queue_is_404(viewer, queue_name):
    assert viewer.get(page(queue_name)).status_code == 404


def test_charts_read_archive_and_samples(viewer, queue, manager):
    ids = manager.send_batch(queue, [{"n": i} for i in range(3)])
    manager.archive(queue, ids)
    now = timezone.now()
    QueueSample.objects.bulk_create(
        QueueSample(
            queue=queue,
            sampled_at=now - timedelta(minutes=m),
            queue_length=10 + m,
            queue_visible_length=5,
            in_flight_length=1,
            delayed_length=0,
            archive_size=0,
            total_messages=1000 - 30 * m,
        )
        for m in range(5)
    )
    for range_key in ("hour", "day"):
        html = viewer.get(page(queue), {"range": range_key}).content.decode()
        svgs = re.findall(r'<svg [^>]*class="pgmq-chart".*?</svg>', html, re.S)
        assert len(svgs) == 3
        throughput, _latency, depth = svgs
        assert "<rect" in throughput.split("</title>", 1)[1]  # a bar for the archived messages
        if range_key == "hour":  # sent per minute, from the samples' totals
            assert "<polyline" in throughput
        assert "<polyline" in depth or "<circle" in depth
        assert "no data yet" not in depth


def test_workers_page_marks_stale_workers(viewer):
    now = timezone.now()
    Worker.objects.create(
        host="alive-host",
        pid=11,
        queues=["a"],
        expires_at=now + timedelta(minutes=1),
        processed=12,
        failed=3,
    )
    Worker.objects.create(host="dead-host", pid=22, queues=["b"], expires_at=now)
    response = viewer.get(ADMIN + "workers/")
    assert response.status_code == 200
    body = text(response)
    assert "alive-host:11 alive a 1" in body
    assert "dead-host:22 stale b" in body
    assert response.content.decode().count('class="pgmq-stale"') == 1


def test_admin_index_links_to_the_dashboard(viewer):
    response = viewer.get("/admin/")
    assert response.status_code == 200
    assert ADMIN in response.content.decode()


@pytest.mark.parametrize(
    "path",
    [
        "a;b/change/",  # invalid characters
        "x" * 60 + "/change/",  # too long
        "a$b/purge/",
        "%00/delete/",
        "no_such_queue/change/",
        "_ZZ/change/",  # a broken admin escape
        "a/b/change/",  # no dashboard page at this address
        "nothing/here/",
    ],
)
def test_a_bad_or_unknown_queue_url_is_the_admins_404_page(operator, path):
    response = operator.get(ADMIN + path)
    assert response.status_code == 404
    body = response.content.decode()
    assert 'id="pgmq-not-found"' in body and 'id="site-name"' in body  # inside the admin


def test_an_unknown_database_is_the_admins_404_page(viewer):
    response = viewer.get(ADMIN, {"db": "nowhere"})
    assert response.status_code == 404
    assert "no PostgreSQL database alias &#x27;nowhere&#x27;" in text(response)


def _sample_depths(queue: str, depths: list[int]) -> None:
    now = timezone.now()
    QueueSample.objects.bulk_create(
        QueueSample(
            queue=queue,
            sampled_at=now - timedelta(seconds=20 * (len(depths) - i)),
            queue_length=d,
            queue_visible_length=d,
            in_flight_length=0,
            delayed_length=0,
            archive_size=0,
            total_messages=d,
        )
        for i, d in enumerate(depths)
    )


@pytest.mark.parametrize(
    ("depths", "growing"),
    [
        ([5, 5, 5, 5], False),  # never fell, never rose: not growing
        ([5, 6, 7, 8], True),
        ([5, 5, 6, 6], True),  # never fell and rose
        ([5, 9, 4, 9], False),  # fell in between (within one minute: still seen)
        ([9, 8, 7], False),
    ],
)
def test_the_growing_badge_needs_a_rise_across_the_window(viewer, queue, manager, depths, growing):
    manager.send(queue, {"n": 1})  # not empty now: an empty queue is never growing
    _sample_depths(queue, depths)
    assert ("growing" in overview_row(viewer.get(ADMIN), queue)) is growing


def test_an_empty_queue_is_never_growing(viewer, queue):
    _sample_depths(queue, [5, 6, 7, 8])  # it rose, then was emptied before this view
    assert "growing" not in overview_row(viewer.get(ADMIN), queue)


def test_the_week_chart_has_a_tick_per_local_day(viewer, queue, settings):
    settings.TIME_ZONE = "America/New_York"  # the admin's time zone, not UTC
    response = viewer.get(page(queue), {"range": "week"})
    depth_chart = _svgs(response.content.decode()).split("<svg")[-1]
    labels = re.findall(
        r'text-anchor="middle">((?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d+ \w+)<', depth_chart
    )
    assert len(labels) >= 7 and len(set(labels)) == len(labels)


def test_archived_messages_show_no_vt(viewer, queue, manager):
    ids = manager.send_batch(queue, [{"n": 1}, {"n": 2}])
    manager.archive(queue, ids)
    html = viewer.get(page(queue), {"source": "archive"}).content.decode()
    head = re.search(r"<thead>.*?</thead>", html, re.S).group(0)
    assert "<th>vt</th>" not in head and "Archived" in head
    assert " ago</td>" not in re.search(r"<tbody>.*?</tbody>", html, re.S).group(0)


def test_a_dashboard_address_without_its_final_slash_is_redirected(viewer, queue):
    response = viewer.get(page(queue).rstrip("/"))
    assert response.status_code == 301
    assert response["Location"] == page(queue)
    assert viewer.get(ADMIN + "workers").status_code == 301
    assert viewer.get(ADMIN + "nothing/here").status_code == 404


def named_commands(text: str) -> set[tuple[str, str]]:
    """(command, option) pairs a text names, e.g. ("pgmq_metrics", "--record"); option ''."""
    found = set()
    for name, options in re.findall(r"\b(pgmq_[a-z_]+)((?: --[a-z][a-z-]*)*)", text):
        found.add((name, ""))
        found.update((name, option) for option in options.split())
    return found


def test_the_pages_name_only_commands_and_options_that_exist():
    from pathlib import Path

    from django.core.management import get_commands, load_command_class

    root = Path(pgmq.__file__).parent
    sources = [*(root / "templates").rglob("*.html"), *(root / "dashboard").glob("*.py")]
    texts = [p.read_text() for p in sources if p.name != "prometheus.py"]  # metric names there
    named = {pair for text in texts for pair in named_commands(text)}
    named -= {("pgmq_dashboard", "")}  # the template tag library
    commands = get_commands()
    unknown = {(name, option) for name, option in named if name not in commands}
    for name, option in named - unknown:
        parser = load_command_class(commands[name], name).create_parser("manage.py", name)
        if option and option not in parser._option_string_actions:
            unknown.add((name, option))
    assert ("pgmq_consume", "") in named and unknown == set()
    assert named_commands("run pgmq_metrics --record") == {
        ("pgmq_metrics", ""),
        ("pgmq_metrics", "--record"),
    }
