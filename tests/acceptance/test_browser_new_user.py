"""The admin at 1280 x 800 as a new user sees it, in English and in German: the overview
and the task results fit the window, a task result row is one line, the limits under an
in-flight figure stand apart, and the breadcrumbs look like the admin's own."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import timedelta

import pytest
from django.utils import timezone

from django_pgmq.manager import QueueManager
from django_pgmq.models import TaskResultRecord
from tests.acceptance.test_browser_dashboard import (
    VIEWPORT,
    _right,
    browser_page,
    chromium,
    demo_queues,
    log_in,
    long_queue,
    operator,
    shot,
    sync_playwright,
)

__all__ = [  # fixtures, used by name
    "browser_page",
    "chromium",
    "demo_queues",
    "long_queue",
    "operator",
    "sync_playwright",
]

pytestmark = pytest.mark.slow
LANGUAGES = ["en", "de"]

# Per cell of the table, how many lines its text takes (text fragments at distinct heights).
LINES_PER_CELL = """table => Array.from(table.querySelectorAll('td, th')).map(cell => {
  const walker = document.createTreeWalker(cell, NodeFilter.SHOW_TEXT);
  const tops = [];
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    if (!node.textContent.trim()) continue;
    const range = document.createRange();
    range.selectNodeContents(node);
    for (const rect of range.getClientRects()) {
      if (rect.width > 0 && !tops.some(top => Math.abs(top - rect.top) < 4)) tops.push(rect.top);
    }
  }
  return [cell.innerText.trim(), tops.length];
})"""


@pytest.fixture
def language(request, settings) -> str:
    """The admin's language for the test (the browser asks for it too)."""
    settings.LANGUAGE_CODE = request.param
    return request.param


def in_language(page, language: str) -> None:
    page.context.set_extra_http_headers({"Accept-Language": language})


@pytest.fixture
def limited_queue(demo_queues) -> Iterator[str]:
    """A queue with both limits, two messages in flight and two handed out."""
    name = "limited"
    manager = QueueManager()
    manager.create_queue(name)
    manager.set_queue_attributes(name, max_in_flight=2, rate_limit={"count": 10, "seconds": 60})
    manager.send_batch(name, [{"n": i} for i in range(5)])
    manager.read(name, vt=300, qty=2)
    try:
        yield name
    finally:
        manager.drop_queue(name)


@pytest.mark.parametrize("language", LANGUAGES, indirect=True)
def test_the_overview_fits_1280_in_each_language(
    browser_page, operator, long_queue, limited_queue, language
):
    page = browser_page
    in_language(page, language)
    log_in(page, operator, "/admin/django_pgmq/queue/")
    width = page.evaluate("document.documentElement.scrollWidth")
    print(f"overview in {language}: {width} px wide, table to {_right(page, '#pgmq-overview')}")
    assert width <= VIEWPORT["width"]
    assert _right(page, "#pgmq-overview thead th:last-child") <= VIEWPORT["width"]
    content = page.locator("#content").first
    padding = float(content.evaluate("e => getComputedStyle(e).paddingRight")[:-2])
    assert _right(page, "#pgmq-overview") <= _right(page, "#content") - padding + 0.5
    # The limits under the in-flight figure: one line each, never run together.
    limits = page.locator(f'tr[data-queue="{limited_queue}"] .pgmq-limits > span')
    boxes = [limits.nth(i).bounding_box() for i in range(limits.count())]
    assert len(boxes) == 2 and boxes[1]["y"] >= boxes[0]["y"] + boxes[0]["height"] - 1
    shot(page, f"overview_{language}_1280")


@pytest.mark.parametrize("language", LANGUAGES, indirect=True)
def test_task_results_are_one_line_a_row_at_1280(browser_page, operator, language):
    now = timezone.now()
    for i in range(4):
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
    page = browser_page
    in_language(page, language)
    log_in(page, operator, "/admin/django_pgmq/taskresultrecord/")
    assert page.evaluate("document.documentElement.scrollWidth") <= VIEWPORT["width"]
    # The whole table shows: its list box scrolls sideways when it is wider (then cut off).
    assert _right(page, "#result_list") <= _right(page, "#changelist .results") + 0.5
    cells = page.locator("#result_list").evaluate(LINES_PER_CELL)
    wrapped = [(text, lines) for text, lines in cells if lines > 1]
    assert wrapped == [], f"cells on more than one line: {wrapped}"
    task = page.locator("#result_list .pgmq-task").first
    assert task.get_attribute("title").endswith("send_the_monthly_invoice_reminder_email")
    shot(page, f"task_results_{language}_1280")


def test_the_breadcrumbs_look_like_the_admins_own(browser_page, operator):
    """The dashboard's breadcrumbs are drawn as the admin's own page draws its (Django 5.2:
    a div, Django 6: an ordered list): same element, same bar colour, same height."""
    page = browser_page
    log_in(page, operator, "/admin/django_pgmq/taskresultrecord/")
    style = (
        "e => [e.tagName, getComputedStyle(e).backgroundColor, e.getBoundingClientRect().height]"
    )
    admins = page.locator(".breadcrumbs").first.evaluate(style)
    for address in ("/admin/django_pgmq/queue/", "/admin/django_pgmq/queue/schedules/"):
        page.goto(address)
        ours = page.locator(".breadcrumbs").first.evaluate(style)
        assert ours[:2] == admins[:2] and abs(ours[2] - admins[2]) <= 1, (address, ours, admins)
    shot(page, "breadcrumbs")
