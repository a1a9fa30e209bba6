"""The dashboard in a real browser: Debian's Chromium driven by Playwright, on live_server.

Chromium comes from Debian's package (installed here with apt-get when missing and we
are root); Playwright only drives it (``executable_path``), it never downloads a
browser. Screenshots go to ``screenshots/`` (git-ignored). With
``PGMQ_README_SCREENSHOT=1`` the populated overview is also saved as
``docs/overview.png`` for the README.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path

import pytest
from django.contrib.auth.models import Permission, User
from django.db import connection, connections
from django.utils import timezone

from django_pgmq.internal import InternalManager
from django_pgmq.manager import QueueManager
from django_pgmq.models import QueueConfig, QueueSample, Worker
from django_pgmq.pausing import paused_queues
from tests.debian_packages import apt_install, run

ROOT = Path(__file__).resolve().parents[2]
# One folder per Python: CI runs its two legs (3.11 and 3.13) at the same time in one checkout.
SCREENSHOTS = ROOT / "screenshots" / f"py{sys.version_info.major}{sys.version_info.minor}"
CHROMIUM = Path("/usr/bin/chromium")
LAUNCH_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
PASSWORD = "a-browser-test-password"
VIEWPORT = {"width": 1280, "height": 800}  # the smallest screen the admin is laid out for
DEMO_QUEUES = ["orders", "orders_dlq", "emails", "reports", "webhooks", "thumbnails", "events"]

pytestmark = pytest.mark.slow


@pytest.fixture(scope="session")
def chromium() -> Path:
    """Debian's Chromium, installed on first use; skips (saying why) only if it cannot be."""
    if not CHROMIUM.exists():
        why = apt_install("chromium")
        if not CHROMIUM.exists():
            pytest.skip(f"Chromium is missing at {CHROMIUM} and could not be installed: {why}")
    return CHROMIUM


@pytest.fixture(scope="session")
def sync_playwright():
    """Playwright's sync API, pip-installed into this interpreter when missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        why = run([sys.executable, "-m", "pip", "install", "playwright>=1.45"])
        try:
            from playwright.sync_api import sync_playwright
        except ImportError:
            pytest.skip(f"the playwright package could not be installed: {why}")
    return sync_playwright


@pytest.fixture
def browser_page(transactional_db, chromium, sync_playwright, live_server, monkeypatch) -> Iterator:
    """A fresh page of headless Chromium whose relative URLs go to the live server.

    The test database is set up before the (session-wide) live server, so it is
    also torn down after the server has closed its connections.
    """
    # Playwright's sync API runs an event loop in this thread; the test's own ORM
    # calls are still synchronous, so Django's async guard must let them through.
    monkeypatch.setenv("DJANGO_ALLOW_ASYNC_UNSAFE", "true")
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=str(chromium), headless=True, args=LAUNCH_ARGS
        )
        context = browser.new_context(base_url=live_server.url, viewport=VIEWPORT)
        page = context.new_page()
        page.set_default_timeout(20_000)
        yield page
        browser.close()
        # Connections the test opened while Playwright's loop ran belong to that
        # context; close them here, or the test database cannot be dropped later.
        connections.close_all()


@pytest.fixture
def operator(transactional_db) -> User:
    """A staff user with every dashboard permission, who logs in with a password."""
    user = User.objects.create_user("operator", password=PASSWORD, is_staff=True)
    user.user_permissions.set(Permission.objects.filter(content_type__app_label="django_pgmq"))
    return user


def log_in(page, user: User, next_url: str) -> None:
    page.goto(f"/admin/login/?next={next_url}")
    page.fill("#id_username", user.username)
    page.fill("#id_password", PASSWORD)
    page.click("input[type=submit]")
    page.wait_for_url(f"**{next_url}")


def shot(page, name: str) -> Path:
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)
    return path


def test_operator_sends_and_purges_through_the_browser(browser_page, operator, queue):
    page, manager = browser_page, InternalManager()
    manager.send_batch(queue, [{"order": i} for i in range(3)])
    overview = "/admin/django_pgmq/queue/"
    log_in(page, operator, overview)

    row = page.locator(f'tr[data-queue="{queue}"]')
    assert row.locator("td").first.inner_text().strip() == "3"
    shot(page, "overview")

    row.locator("a", has_text=queue).click()
    page.wait_for_selector("#pgmq-messages")
    assert page.locator(".pgmq-chart").count() == 3
    assert page.locator("#pgmq-messages tbody tr").count() == 3
    shot(page, "queue")

    # Invalid JSON is refused with the reason, and nothing is sent.
    page.click("#pgmq-send summary")
    page.fill("#id_message", "{oops")
    page.click("#pgmq-send input[type=submit]")
    assert "Not valid JSON" in page.locator("#pgmq-send").inner_text()
    assert len(manager.browse_messages(queue)) == 3

    page.fill("#id_message", '{"hello": "browser", "n": 1}')
    page.fill("#id_headers", '{"source": "playwright"}')
    page.click("#pgmq-send input[type=submit]")
    page.wait_for_selector(".messagelist .success")
    assert "Sent message" in page.locator(".messagelist").inner_text()
    sent = manager.browse_messages(queue)[0]
    assert (sent.message, sent.headers) == ({"hello": "browser", "n": 1}, {"source": "playwright"})
    newest = page.locator("#pgmq-messages tbody tr").first
    assert newest.locator("td").nth(1).inner_text().strip() == str(sent.msg_id)
    newest.locator("summary").click()
    assert '"hello": "browser"' in newest.locator("pre").first.inner_text()
    shot(page, "queue_after_send")

    page.click("#pgmq-purge")
    page.wait_for_selector("#pgmq-confirm")
    assert page.locator("#pgmq-count").inner_text().strip() == "4"
    shot(page, "purge_confirm")
    assert len(manager.browse_messages(queue)) == 4  # the confirmation page changed nothing
    page.click("#pgmq-confirm")
    page.wait_for_selector(".messagelist .success")
    assert f"Purged 4 messages from {queue}" in page.locator(".messagelist").inner_text()
    assert manager.browse_messages(queue) == []
    shot(page, "queue_after_purge")


def test_populated_overview_screenshot(browser_page, operator, demo_queues):
    """The overview with several queues in different states; also the README's picture."""
    page = browser_page
    log_in(page, operator, "/admin/django_pgmq/queue/")
    for name in DEMO_QUEUES:
        assert page.locator(f'#pgmq-overview tr[data-queue="{name}"]').count() == 1
    attention = page.locator("#pgmq-overview tr.pgmq-attention")
    flagged = {attention.nth(i).get_attribute("data-queue") for i in range(attention.count())}
    assert {"reports", "webhooks", "orders"} <= flagged
    assert "thumbnails" not in flagged
    assert page.locator('tr[data-queue="events"] .pgmq-est').count() >= 2  # marked estimates
    assert page.locator("svg.pgmq-sparkline").count() >= 4
    path = shot(page, "overview_populated")
    if os.environ.get("PGMQ_README_SCREENSHOT") == "1":
        (ROOT / "docs").mkdir(exist_ok=True)
        page.set_viewport_size({"width": 1500, "height": 700})
        page.screenshot(path=str(ROOT / "docs" / "overview.png"), full_page=True)
    assert path.stat().st_size > 10_000

    page.locator('tr[data-queue="orders"] a', has_text="orders").first.click()
    page.wait_for_selector(".pgmq-chart")
    assert page.locator(".pgmq-chart rect title").count() > 10  # throughput bars
    shot(page, "queue_populated")
    page.locator(".pgmq-tabs a", has_text="Dead letters (orders_dlq)").click()
    page.wait_for_selector("#pgmq-messages")
    assert page.locator("#pgmq-messages tbody tr").count() == 4
    shot(page, "dead_letters")
    page.goto("/admin/django_pgmq/queue/workers/")
    assert page.locator("#pgmq-workers tr.pgmq-stale").count() == 1
    shot(page, "workers")


def test_a_bad_queue_url_is_the_admins_404_page(browser_page, operator):
    page = browser_page
    log_in(page, operator, "/admin/django_pgmq/queue/")
    for bad in ("a;b/change/", "no_such_queue/change/", "x/y/z/"):
        response = page.goto(f"/admin/django_pgmq/queue/{bad}")
        assert response.status == 404
        assert page.locator("#pgmq-not-found").is_visible()
        assert page.locator("#site-name").is_visible()  # the admin's header, not a bare error
        assert "Traceback" not in page.content()
    assert "does not exist" in page.goto("/admin/django_pgmq/queue/no_such_queue/change/").text()
    shot(page, "not_found")
    page.click("text=Back to the queues")
    page.wait_for_selector(".pgmq-cards")


def test_a_bulk_action_shows_the_count_then_acts_on_every_match(browser_page, operator, queue):
    page, manager = browser_page, InternalManager()
    manager.send_batch(queue, [{"kind": "stale", "n": i} for i in range(5)])
    keep = manager.send_batch(queue, [{"kind": "fresh", "n": i} for i in range(2)])
    log_in(page, operator, "/admin/django_pgmq/queue/")
    page.locator(f'tr[data-queue="{queue}"] a', has_text=queue).click()
    page.wait_for_selector("#pgmq-messages")

    page.fill(".pgmq-filters input[name=contains]", '{"kind": "stale"}')
    page.click(".pgmq-filters button[type=submit]")
    page.wait_for_selector("#pgmq-bulk")
    assert page.locator("#pgmq-messages tbody tr").count() == 5
    page.select_option("#pgmq-bulk select[name=bulk_action]", "delete")
    page.click("#pgmq-bulk button[type=submit]")
    page.wait_for_selector("#pgmq-confirm")
    assert page.locator("#pgmq-count").inner_text().strip() == "5"
    assert len(manager.browse_messages(queue)) == 7  # the confirmation page changed nothing
    shot(page, "bulk_confirm")

    page.click("#pgmq-confirm")
    page.wait_for_selector(".messagelist .success")
    assert "5 messages in 1 batches" in page.locator(".messagelist").inner_text()
    assert sorted(m.msg_id for m in manager.browse_messages(queue)) == keep
    shot(page, "bulk_done")


def test_pause_and_resume_a_queue(browser_page, operator, queue):
    page = browser_page
    log_in(page, operator, "/admin/django_pgmq/queue/")
    page.locator(f'tr[data-queue="{queue}"] a', has_text=queue).click()
    page.wait_for_selector("#pgmq-pause")
    assert page.locator("#pgmq-consumption").inner_text() == "running"

    page.click("#pgmq-pause button")
    page.wait_for_selector(".messagelist .success")
    assert page.locator("#pgmq-consumption").inner_text() == "paused"
    assert paused_queues("default") == {queue}
    shot(page, "queue_paused")
    page.goto("/admin/django_pgmq/queue/")
    assert "paused" in page.locator(f'tr[data-queue="{queue}"] .pgmq-flags').inner_text()

    page.locator(f'tr[data-queue="{queue}"] a', has_text=queue).click()
    page.click("#pgmq-pause button")
    page.wait_for_selector(".messagelist .success")
    assert page.locator("#pgmq-consumption").inner_text() == "running"
    assert paused_queues("default") == frozenset()


def test_layout_at_1280_by_800(browser_page, operator, demo_queues, long_queue):
    """Long names ellipsize and the Attention column stays on screen; the week has day ticks."""
    page = browser_page
    log_in(page, operator, "/admin/django_pgmq/queue/")
    row = page.locator(f'#pgmq-overview tr[data-queue="{long_queue}"]')
    name = row.locator("a.pgmq-name")
    assert name.evaluate("el => el.scrollWidth > el.clientWidth")  # cut with an ellipsis
    assert name.get_attribute("title") == long_queue
    attention = page.locator("#pgmq-overview thead th").last
    box = attention.bounding_box()
    assert box["x"] + box["width"] <= VIEWPORT["width"]
    assert page.evaluate("document.documentElement.scrollWidth") <= VIEWPORT["width"]
    shot(page, "overview_1280")

    page.goto("/admin/django_pgmq/queue/orders/change/?range=week")
    depth = page.locator(".pgmq-chart").last
    days = [t for t in depth.locator("text").all_text_contents() if t[:3] in WEEKDAYS]
    assert len(days) >= 7 and len(set(days)) == len(days)
    shot(page, "queue_week")

    page.goto("/admin/django_pgmq/queue/orders/change/?source=archive")
    headers = [
        h.strip().lower() for h in page.locator("#pgmq-messages thead th").all_text_contents()
    ]
    assert "vt" not in headers and "archived" in headers
    shot(page, "archive_1280")


WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


@pytest.fixture
def long_queue(demo_queues) -> Iterator[str]:
    """A queue with a name of the longest allowed length, needing attention."""
    name = "customer_notifications_for_the_billing_team_47"[:47]
    manager = QueueManager()
    manager.create_queue(name)
    manager.send_batch(name, [{"n": i} for i in range(3)])
    manager.pause_queue(name)
    try:
        yield name
    finally:
        manager.drop_queue(name)


# -- demo data -------------------------------------------------------------------


def _execute(sql: str) -> None:
    with connection.cursor() as cursor:
        cursor.execute(sql)


@pytest.fixture
def demo_queues(transactional_db, settings) -> Iterator[None]:
    """Queues in typical states: busy with dead letters, delayed, stuck, poisoned, idle, large.

    The exact-count limit is lowered so that the large queue shows estimates (≈).
    """
    settings.PGMQ = {**settings.PGMQ, "DASHBOARD_EXACT_LIMIT": 2000}
    manager = QueueManager()
    for name in DEMO_QUEUES:
        manager.create_queue(name)
    try:
        _fill_demo_queues(manager)
        yield
    finally:
        for name in DEMO_QUEUES:
            manager.drop_queue(name)


def _fill_demo_queues(manager: QueueManager) -> None:
    now = timezone.now()
    QueueConfig.objects.create(queue="orders", max_receive_count=5, dead_letter_queue="orders_dlq")
    QueueConfig.objects.create(queue="webhooks", max_receive_count=3)
    # orders: a busy queue, 300 archived over the last hour, some in flight, growing.
    ids = manager.send_batch("orders", [{"order_id": 1000 + i, "total": i * 3} for i in range(300)])
    manager.archive("orders", ids)
    _execute(
        """UPDATE pgmq.a_orders SET
               archived_at = now() - make_interval(secs => (msg_id * 7919) % 3500),
               enqueued_at = now() - make_interval(secs => (msg_id * 7919) % 3500)
                             - make_interval(secs => 0.2 + ((msg_id * 31) % 40) / 10.0)"""
    )
    manager.send_batch("orders", [{"order_id": 2000 + i} for i in range(42)])
    manager.read("orders", vt=300, qty=6)
    manager.send_batch("orders_dlq", [{"order_id": 900 + i} for i in range(4)])
    # emails: scheduled for later.
    manager.send_batch("emails", [{"to": f"user{i}@example.com"} for i in range(25)], delay=3600)
    manager.send_batch("emails", [{"to": "now@example.com"}] * 3)
    # reports: nobody reads them, the oldest waits for two hours.
    manager.send_batch("reports", [{"report": i} for i in range(120)])
    _execute(
        "UPDATE pgmq.q_reports SET vt = vt - interval '2 hours', "
        "enqueued_at = enqueued_at - interval '2 hours'"
    )
    # webhooks: messages that keep failing.
    manager.send_batch("webhooks", [{"url": f"https://hooks.example/{i}"} for i in range(8)])
    for _ in range(3):
        manager.read("webhooks", vt=0, qty=2)
    # thumbnails: idle, with notifications on.
    manager.enable_notify("thumbnails", 250)
    ids = manager.send_batch("thumbnails", [{"image": i} for i in range(20)])
    manager.archive("thumbnails", ids)
    # events: larger than the exact-count limit, so its figures are estimates.
    manager.send_batch("events", [{"event": "click", "n": i} for i in range(6000)])
    _execute("ANALYZE pgmq.q_events")
    _samples(now)
    expires = now + timedelta(seconds=30)
    Worker.objects.create(
        host="web-1",
        pid=4242,
        queues=["orders", "thumbnails"],
        concurrency=4,
        expires_at=expires,
        processed=1320,
        failed=7,
    )
    Worker.objects.create(
        host="web-2",
        pid=5151,
        queues=["emails", "webhooks", "events"],
        concurrency=2,
        expires_at=expires,
        processed=210,
        failed=31,
    )
    Worker.objects.create(
        host="batch-1",
        pid=999,
        queues=["reports"],
        expires_at=now - timedelta(minutes=20),
        heartbeat_at=now - timedelta(minutes=21),
        processed=5,
        failed=0,
    )


def _samples(now) -> None:
    """One sample a minute for the last hour: orders growing, reports stuck, emails steady."""
    curves = {
        "orders": lambda m: 42 - m * 0.5 if m < 60 else 12,
        "orders_dlq": lambda m: 4 if m < 30 else 2,
        "emails": lambda m: 28 + (m % 7),
        "reports": lambda m: 120,
        "webhooks": lambda m: 8 - (m % 3),
        "thumbnails": lambda m: max(0, 9 - abs(m % 20 - 10)),
        "events": lambda m: 6000 - m * 40,
    }
    QueueSample.objects.bulk_create(
        QueueSample(
            queue=queue,
            sampled_at=now - timedelta(minutes=m),
            queue_length=round(curve(m)),
            queue_visible_length=round(curve(m)),
            in_flight_length=0,
            delayed_length=0,
            archive_size=0,
            total_messages=10_000 - m * 5 - (m * m) % 7,
        )
        for queue, curve in curves.items()
        for m in range(60)
    )


# -- what a new user saw at 1280 x 800 ----------------------------------------------


def _right(page, selector: str) -> float:
    box = page.locator(selector).first.bounding_box()
    assert box is not None, selector
    return box["x"] + box["width"]


def test_the_overview_table_stays_inside_the_content(
    browser_page, operator, demo_queues, long_queue
):
    page = browser_page
    log_in(page, operator, "/admin/django_pgmq/queue/")
    content = page.locator("#content").first
    padding = float(content.evaluate("e => getComputedStyle(e).paddingRight")[:-2])
    inside = _right(page, "#content") - padding  # the content box, where the cards end
    assert _right(page, "#pgmq-overview") <= inside + 0.5
    assert _right(page, ".pgmq-cards") <= inside + 0.5
    shot(page, "overview_inside_1280")
    assert page.evaluate("document.documentElement.scrollWidth") <= VIEWPORT["width"]


def test_queue_page_charts_share_one_width_and_attribute_fields_line_up(
    browser_page, operator, demo_queues
):
    page = browser_page
    log_in(page, operator, "/admin/django_pgmq/queue/orders/change/")
    widths = [round(box["width"]) for box in map(lambda c: c.bounding_box(), page.locator(
        ".pgmq-charts .pgmq-chart").all())]  # fmt: skip
    assert len(widths) == 3 and max(widths) - min(widths) <= 1, widths
    fields = page.locator("#pgmq-attributes-form input, #pgmq-attributes-form select")
    lefts = {round(f.bounding_box()["x"]) for f in fields.all() if f.is_visible()}
    assert len(lefts) == 1, f"attribute fields start at {sorted(lefts)}"
    shot(page, "queue_layout_1280")


def test_a_fresh_queue_says_its_charts_have_too_little_data(browser_page, operator, queue):
    """One depth sample (a fresh install): no lone dots, a sentence instead; sends counted."""
    manager = QueueManager()
    manager.send_batch(queue, [{"n": i} for i in range(90)])
    _execute(f"UPDATE pgmq.meta SET created_at = now() - interval '10 minutes' "
             f"WHERE queue_name = '{queue}'")  # fmt: skip
    now = timezone.now()
    QueueSample.objects.create(
        queue=queue,
        sampled_at=now,
        queue_length=90,
        queue_visible_length=90,
        in_flight_length=0,
        delayed_length=0,
        archive_size=0,
        total_messages=90,
    )
    page = browser_page
    log_in(page, operator, "/admin/django_pgmq/queue/")
    spark = page.locator(f'tr[data-queue="{queue}"] svg.pgmq-sparkline')
    assert spark.locator("circle").count() == 0 and "too few samples" in spark.inner_html()
    page.locator(f'tr[data-queue="{queue}"] a', has_text=queue).click()
    depth = page.locator(".pgmq-charts .pgmq-chart").nth(2)
    assert "too little data for a line yet" in depth.inner_html()
    throughput = page.locator(".pgmq-charts .pgmq-chart").first
    assert throughput.locator("polyline").count() == 1  # sent / min since the queue was made
    shot(page, "queue_fresh")


def test_task_results_fit_1280_and_a_result_is_read_only(browser_page, operator):
    import uuid

    from django_pgmq.models import TaskResultRecord

    now = timezone.now()
    records = [
        TaskResultRecord.objects.create(
            id=uuid.uuid4(),
            backend="default",
            queue_name="notifications_for_the_billing_team",
            task_path="example_project.demo.tasks.send_the_monthly_invoice_reminder_email",
            status="FAILED" if i % 2 else "SUCCESSFUL",
            enqueued_at=now - timedelta(minutes=i),
            finished_at=now,
            worker_ids=["web-1:4242"],
        )
        for i in range(5)
    ]
    page = browser_page
    listing = "/admin/django_pgmq/taskresultrecord/"
    log_in(page, operator, listing)
    assert page.evaluate("document.documentElement.scrollWidth") <= VIEWPORT["width"]
    headers = page.locator("#result_list thead th").all_text_contents()
    assert any("Enqueued" in h for h in headers) and any("Finished" in h for h in headers)
    assert _right(page, "#result_list thead th:last-child") <= VIEWPORT["width"]
    shot(page, "task_results_1280")

    page.goto(f"{listing}{records[0].id}/change/")
    assert "View task result" in page.locator("h1").inner_text()
    assert page.locator("input[type=submit][name=_save]").count() == 0
    shot(page, "task_result")
