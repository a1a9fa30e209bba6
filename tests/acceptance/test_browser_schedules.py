"""The schedule pages in a real browser (Debian's Chromium driven by Playwright, on live_server)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from django.db import connection

from django_pgmq.internal import InternalManager
from tests.acceptance import test_browser_dashboard as dashboard
from tests.acceptance.test_browser_dashboard import log_in, shot

# The browser fixtures of the dashboard's browser test, used here too.
chromium = dashboard.chromium
sync_playwright = dashboard.sync_playwright
browser_page = dashboard.browser_page
operator = dashboard.operator

pytestmark = pytest.mark.slow

NAME = "browser_nightly"


@pytest.fixture
def schedule(queue, settings):
    """A Berlin schedule with one tick sent and three skipped; the user's zone is New York."""
    settings.TIME_ZONE = "America/New_York"
    manager = InternalManager()
    manager.create_schedule(
        NAME, "30 2 * * *", queue, {"report": "daily"}, time_zone="Europe/Berlin"
    )
    with connection.cursor() as cursor:
        cursor.execute(
            "UPDATE pgmq.schedules SET next_tick = %s WHERE schedule_name = %s",
            [datetime(2026, 3, 25, 1, 30, tzinfo=UTC), NAME],
        )
    [sent] = manager.enqueue_due_schedules(at=datetime(2026, 3, 28, 1, 35, tzinfo=UTC))
    yield queue, sent
    manager.drop_schedule(NAME)


def test_a_schedule_page_edits_toggles_runs_and_shows_its_ticks(browser_page, operator, schedule):
    page, manager = browser_page, InternalManager()
    queue, sent = schedule
    log_in(page, operator, "/admin/django_pgmq/queue/schedules/")
    row = page.locator("#pgmq-schedules tr", has_text=NAME)
    assert "30 2 * * *" in row.inner_text() and "Europe/Berlin" in row.inner_text()
    shot(page, "schedules")

    row.locator("a", has_text=NAME).click()
    page.wait_for_selector("#pgmq-next-ticks")
    assert "3 ticks skipped" in page.locator("#pgmq-schedule-status").inner_text()
    upcoming = page.locator("#pgmq-next-ticks tbody tr")
    assert upcoming.count() == 5
    first = upcoming.first.locator("td")
    # 29 March: Berlin skips 02:00-03:00, so 02:30 fires at 03:00 CEST, 21:00 EDT in New York
    assert first.nth(0).inner_text() == "2026-03-28 21:00:00 EDT"
    assert first.nth(1).inner_text() == "2026-03-29 03:00:00 CEST"
    assert upcoming.nth(1).locator("td").nth(1).inner_text() == "2026-03-30 02:30:00 CEST"
    last = page.locator("#pgmq-last-ticks tbody tr").first.locator("td")
    assert last.nth(0).inner_text() == "2026-03-27 21:30:00 EDT"
    assert last.nth(2).inner_text() == str(sent.msg_id)
    shot(page, "schedule")

    page.click("#pgmq-disable")
    page.wait_for_selector(".messagelist .success")
    assert "disabled" in page.locator("#pgmq-schedule-status").inner_text()
    assert "None: the schedule is disabled." in page.locator("#pgmq-next-ticks").inner_text()
    assert manager.get_schedule(NAME).enabled is False
    page.click("#pgmq-enable")
    page.wait_for_selector(".messagelist .success")
    assert manager.get_schedule(NAME).enabled is True

    # a bad cron is refused on the form, naming the field, and nothing changes
    page.fill("#id_cron", "30 25 * * *")
    page.click("#pgmq-save")
    page.wait_for_selector("#pgmq-schedule-form .errorlist")
    assert (
        'cron field "hour": 25 is out of range 0-23'
        in page.locator("#pgmq-schedule-form").inner_text()
    )
    assert manager.get_schedule(NAME).cron == "30 2 * * *"

    page.fill("#id_cron", "0 4 * * mon")
    page.fill("#id_time_zone", "UTC")
    page.click("#pgmq-save")
    page.wait_for_selector(".messagelist .success")
    saved = manager.get_schedule(NAME)
    assert (saved.cron, saved.time_zone, saved.message) == (
        "0 4 * * mon",
        "UTC",
        {"report": "daily"},
    )
    assert (
        page.locator("#pgmq-next-ticks tbody tr")
        .first.locator("td")
        .nth(1)
        .inner_text()
        .endswith("04:00:00 UTC")
    )

    page.click("#pgmq-run-now")
    page.wait_for_selector(".messagelist .success")
    newest = manager.read(queue, vt=0, qty=10)[-1]
    assert newest.message == {"report": "daily"} and newest.headers["schedule"]["manual"] is True
    assert newest.enqueued_at > datetime.now(UTC) - timedelta(minutes=5)
    shot(page, "schedule_after_edit")
