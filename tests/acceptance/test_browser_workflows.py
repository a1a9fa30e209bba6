"""The workflow pages in headless Chromium at 1280x800, in English and German: the list
links each workflow, a workflow's page draws its graph and fits the screen."""

from __future__ import annotations

import pytest

from django_pgmq.manager import QueueManager
from django_pgmq.workflows import chain, chord, step
from tests.acceptance.test_browser_dashboard import (  # noqa: F401  (fixtures)
    VIEWPORT,
    browser_page,
    chromium,
    log_in,
    operator,
    shot,
    sync_playwright,
)

pytestmark = pytest.mark.slow


@pytest.fixture
def workflow(transactional_db) -> int:
    """fetch, then 12 parts in parallel, then total: fetch done, its parts sent."""
    manager = QueueManager()
    manager.create_queue("wf_browser")
    parts = [step(f"resize_{i}", "wf_browser", {"size": 64 * i}) for i in range(12)]
    wid = manager.create_workflow(
        chain(
            step("fetch", "wf_browser", {"url": "https://example.com/a-rather-long-address"}),
            chord(parts, step("total", "wf_browser", {})),
        )
    )
    [fetch] = [s for s in manager.workflow_status(wid) if s.step == "fetch"]
    manager.complete("wf_browser", fetch.msg_id, {"rows": list(range(40))})
    return wid


@pytest.mark.parametrize(("language", "words"), [("en", "Workflows"), ("de", "Schritt")])
def test_workflow_pages_fit_1280_and_draw_the_graph(
    browser_page,  # noqa: F811  (the fixture imported above)
    operator,  # noqa: F811
    workflow,
    settings,
    language,
    words,
):
    settings.LANGUAGE_CODE = language
    page = browser_page
    log_in(page, operator, "/admin/django_pgmq/queue/workflows/")
    page.click(f'[data-workflow="{workflow}"] a')
    page.wait_for_url(f"**/workflows/{workflow}/")
    assert words.lower() in page.locator("#content").inner_text().lower()  # headers: uppercase
    assert page.locator("svg.pgmq-graph g.pgmq-step").count() == 14
    assert page.locator('svg.pgmq-graph g[data-status="done"]').count() == 1
    assert page.evaluate("document.documentElement.scrollWidth") <= VIEWPORT["width"]
    shot(page, f"workflow_{language}_1280")
    page.goto("/admin/django_pgmq/queue/workflows/")
    assert page.evaluate("document.documentElement.scrollWidth") <= VIEWPORT["width"]
