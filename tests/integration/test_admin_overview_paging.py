"""The overview with a few hundred queues: paging, sorting, search on the server, figures per page.

The queues are made once for the module (committed, dropped at the end); each has its
own depth and oldest age, and one sampler round records them, as a worker would.
"""

from __future__ import annotations

import re
import uuid
from datetime import timedelta

import pytest
from django.db import connection, transaction
from psycopg import sql

from django_pgmq.dashboard.listing import PAGE_SIZE
from django_pgmq.internal import InternalManager
from django_pgmq.models import QueueSample
from django_pgmq.worker.sampling import sample_all_queues

from .test_admin_views import ADMIN, login

COUNT = 300
PREFIX = f"pg{uuid.uuid4().hex[:6]}_"
NAMES = [f"{PREFIX}{i:03d}" for i in range(COUNT)]
DEPTHS = {name: (i * 7) % 11 for i, name in enumerate(NAMES)}  # 0-10: ties, broken by name
# Minutes since each non-empty queue's oldest message was sent: all different.
AGES = {name: 1 + (i * 37) % COUNT for i, name in enumerate(NAMES) if DEPTHS[name]}


@pytest.fixture(scope="module")
def many_queues(django_db_setup, django_db_blocker):
    """COUNT committed queues with their depths and ages, sampled once."""
    with django_db_blocker.unblock():
        manager = InternalManager()
        try:
            for name in NAMES:
                manager.create_queue(name)
                if DEPTHS[name]:
                    manager.send_batch(name, [{"n": n} for n in range(DEPTHS[name])])
            with connection.cursor() as cursor:
                for name, minutes in AGES.items():
                    cursor.execute(
                        sql.SQL(
                            "UPDATE pgmq.{} SET enqueued_at = now() - make_interval(mins => %s)"
                        ).format(sql.Identifier(f"q_{name}")),
                        [minutes],
                    )
            assert sample_all_queues(manager, interval=3600, retention=timedelta(days=1))
            yield
        finally:
            for name in NAMES:
                manager.drop_queue(name)
            QueueSample.objects.filter(queue__startswith=PREFIX).delete()


@pytest.fixture
def viewer(client, db, many_queues):
    login(client, "view_queue")
    return client


def shown(response) -> list[str]:
    """The queue names of an overview page, in order."""
    assert response.status_code == 200, response.content[:300]
    return re.findall(r'<tr[^>]*data-queue="([^"]+)"', response.content.decode())


def every_page(client, **params) -> list[str]:
    """The names of all pages of one listing, page after page."""
    names: list[str] = []
    page, pages = 1, 1
    while page <= pages:
        response = client.get(ADMIN, {"q": PREFIX, **params, "page": page})
        names += shown(response)
        found = re.search(r"page \d+ of (\d+)", response.content.decode())
        pages, page = int(found.group(1)) if found else 1, page + 1
    return names


def expected(sort: str, descending: bool) -> list[str]:
    """The order the overview promises: the key, then the name ascending for ties."""
    if sort == "name":
        return sorted(NAMES, reverse=descending)
    if sort == "queue_length":
        sign = -1 if descending else 1
        return sorted(NAMES, key=lambda n: (sign * DEPTHS[n], n))
    aged = sorted(AGES, key=lambda n: -AGES[n] if descending else AGES[n])
    empty = sorted(n for n in NAMES if n not in AGES)
    return aged + empty if descending else empty + aged


@pytest.mark.parametrize("sort", ["name", "queue_length", "age"])
@pytest.mark.parametrize("direction", ["asc", "desc"])
def test_every_page_of_each_order_holds_the_right_queues(viewer, sort, direction):
    names = every_page(viewer, o=sort, dir=direction)
    assert names == expected(sort, direction == "desc")


def test_a_page_shows_its_range_the_total_and_links_to_the_next(viewer):
    response = viewer.get(ADMIN, {"q": PREFIX, "o": "queue_length", "dir": "desc", "page": 2})
    page = response.content.decode()
    assert shown(response) == expected("queue_length", True)[PAGE_SIZE : 2 * PAGE_SIZE]
    assert f"Queues 51 to 100 of {COUNT}" in page
    assert "page 2 of 6" in page
    assert "page=3" in page and "page=1" in page
    assert "latest sample" in page  # says what the order is based on
    link = re.search(r'href="([^"]*)" id="pgmq-sort-queue_length"', page).group(1)
    assert "o=queue_length" in link and "dir=asc" in link  # a second click reverses


def test_the_old_depth_sort_key_still_sorts_by_queue_length(viewer):
    """``?o=depth`` (bookmarks made before the rename) is ``?o=queue_length``."""
    old = viewer.get(ADMIN, {"q": PREFIX, "o": "depth", "dir": "desc"})
    assert shown(old) == expected("queue_length", True)[:PAGE_SIZE]


def test_the_rows_show_exact_figures(viewer):
    name = expected("queue_length", True)[0]
    response = viewer.get(ADMIN, {"q": PREFIX, "o": "queue_length", "dir": "desc"})
    row = re.search(rf'<tr[^>]*data-queue="{name}".*?</tr>', response.content.decode(), re.S)
    cells = re.sub(r"<[^>]+>", " ", row.group(0)).split()
    assert cells[:2] == [name, str(DEPTHS[name])]


def test_search_is_a_case_insensitive_substring_on_the_server(viewer):
    term = (PREFIX + "1").upper()
    wanted = sorted(n for n in NAMES if n.startswith(PREFIX + "1"))
    assert every_page(viewer, q=term) == wanted
    assert shown(viewer.get(ADMIN, {"q": PREFIX[:-1] + "%"})) == []  # % is no wildcard
    assert "No queue name contains" in viewer.get(ADMIN, {"q": "no such queue"}).content.decode()


def scans() -> dict[str, int]:
    """Scans of each pgmq table so far in this transaction."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT relname, seq_scan + coalesce(idx_scan, 0) FROM pg_stat_xact_user_tables"
            " WHERE schemaname = 'pgmq'"
        )
        return dict(cursor.fetchall())


def test_figures_are_computed_for_the_page_only(viewer):
    """The queue figures read the live tables of the page's queues that hold messages (the
    idle ones are answered from the catalogue), and no other queue's of the 300."""
    with transaction.atomic():
        before = scans()
        names = shown(viewer.get(ADMIN, {"q": PREFIX, "o": "name", "page": 3}))
        after = scans()
    assert len(names) == PAGE_SIZE
    scanned = {t.removeprefix("q_") for t, n in after.items() if n > before.get(t, 0)}
    assert {t for t in scanned if t.startswith(PREFIX)} == {n for n in names if DEPTHS[n]}


@pytest.mark.parametrize(
    ("page", "first"),
    [
        ("0", 0),
        ("-4", 0),
        ("-" + "9" * 5000, 0),
        ("99999999999999999999", COUNT - PAGE_SIZE),
        ("9" * 5000, COUNT - PAGE_SIZE),
        (" 2 ", PAGE_SIZE),
    ],
)
def test_a_page_out_of_range_is_clamped(viewer, page, first):
    names = shown(viewer.get(ADMIN, {"q": PREFIX, "page": page}))
    assert names == sorted(NAMES)[first : first + PAGE_SIZE]


@pytest.mark.parametrize(
    ("params", "reason"),
    [
        ({"o": "size"}, "Unknown sort key"),
        ({"dir": "up"}, "Unknown sort direction"),
        ({"page": "two"}, "is not a whole number"),
        ({"page": "\u00b2"}, "is not a whole number"),  # a digit to str.isdigit, not to int
        ({"q": "a\x00b"}, "NUL"),
    ],
)
def test_bad_listing_parameters_get_the_admins_404(viewer, params, reason):
    response = viewer.get(ADMIN, params)
    assert response.status_code == 404
    page = response.content.decode()
    assert reason in page and 'id="pgmq-not-found"' in page and 'id="site-name"' in page


def test_a_sampler_round_keeps_no_lock_on_the_queues_tables(db, many_queues):
    """Each chunk's reads run in a savepoint rolled back after: their locks go with it."""
    QueueSample.objects.filter(queue__startswith=PREFIX).delete()  # all due again
    with transaction.atomic():
        taken = sample_all_queues(InternalManager(), interval=3600, retention=timedelta(days=1))
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                " WHERE l.pid = pg_backend_pid() AND c.relnamespace = 'pgmq'::regnamespace"
                " AND strpos(c.relname, %s) > 0",
                [PREFIX],
            )
            held = cursor.fetchone()[0]
    assert taken >= COUNT
    assert QueueSample.objects.filter(queue__startswith=PREFIX).count() == COUNT
    assert held == 0
