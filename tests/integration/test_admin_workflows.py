"""The dashboard's workflow pages through Django's test client: the list, a workflow's
page with its graph, and a bad or unknown id (404 with one line, never a 500)."""

from __future__ import annotations

import html
import xml.etree.ElementTree as ET

import pytest
from django.test import Client

from django_pgmq.manager import QueueManager
from django_pgmq.workflows import chain, chord, step
from tests.integration.test_admin_views import ADMIN, login, text

NS = "{http://www.w3.org/2000/svg}"


@pytest.fixture
def manager(db) -> QueueManager:
    manager = QueueManager()
    manager.create_queue("wf_admin")
    return manager


@pytest.fixture
def viewer(client, db) -> Client:
    login(client, "view_queue")
    return client


def make_chord(manager: QueueManager, width: int = 3) -> int:
    """fetch, then ``width`` parts in parallel, then total: returns the workflow id."""
    parts = [step(f"part{i}", "wf_admin", {"i": i}) for i in range(width)]
    return manager.create_workflow(
        chain(step("fetch", "wf_admin", {"url": "x"}), chord(parts, step("total", "wf_admin", {})))
    )


def complete_step(manager: QueueManager, wid: int, name: str, result: object) -> None:
    [sent] = [s for s in manager.workflow_status(wid) if s.step == name]
    assert manager.complete("wf_admin", sent.msg_id, result)


def test_the_list_shows_each_workflow_with_its_steps_done(manager, viewer):
    first = make_chord(manager)
    second = make_chord(manager, width=1)
    complete_step(manager, second, "fetch", 1)
    response = viewer.get(f"{ADMIN}workflows/")
    assert response.status_code == 200
    body = response.content.decode()
    assert body.index(f'data-workflow="{second}"') < body.index(f'data-workflow="{first}"')
    shown = text(response)
    assert "1 of 3" in shown and "0 of 5" in shown
    assert f'href="{ADMIN}workflows/{first}/"' in body
    # the toolbar of every dashboard page links the list
    assert f'href="{ADMIN}workflows/"' in viewer.get(ADMIN).content.decode()


def test_the_list_pages_newest_first_and_filters_by_status(manager, viewer):
    ids = [manager.create_workflow(step("only", "wf_admin", {})) for _ in range(51)]
    first = viewer.get(f"{ADMIN}workflows/").content.decode()
    assert f'data-workflow="{ids[-1]}"' in first and f'data-workflow="{ids[0]}"' not in first
    assert f"?before={ids[1]}" in first
    second = viewer.get(f"{ADMIN}workflows/?before={ids[1]}").content.decode()
    assert f'data-workflow="{ids[0]}"' in second and f'data-workflow="{ids[1]}"' not in second
    [only] = manager.workflow_status(ids[5])
    manager.complete("wf_admin", only.msg_id, None)
    done = viewer.get(f"{ADMIN}workflows/?status=done").content.decode()
    # other tests' finished workflows may be listed too: of this test's, only the done one
    shown = [i for i in ids if f'data-workflow="{i}"' in done]
    assert shown == [ids[5]]


def test_a_workflow_page_draws_its_graph_and_lists_its_steps(manager, viewer):
    wid = make_chord(manager)
    complete_step(manager, wid, "fetch", {"rows": 3})
    response = viewer.get(f"{ADMIN}workflows/{wid}/")
    assert response.status_code == 200
    body = response.content.decode()
    start = body.index("<svg", body.index('id="pgmq-workflow-graph"'))
    end = body.index("</svg>", start) + len("</svg>")
    graph = ET.fromstring(body[start:end])
    boxes = {g.get("data-step"): g.get("data-status") for g in graph.iter(f"{NS}g")}
    assert boxes == {
        "fetch": "done",
        "part0": "sent",
        "part1": "sent",
        "part2": "sent",
        "total": "waiting",
    }
    assert len(graph.findall(f"{NS}line")) == 6  # fetch -> 3 parts -> total
    shown = text(response)
    assert "{&quot;rows&quot;: 3}" in body or '{"rows": 3}' in shown
    assert "part0, part1, part2" in shown  # what total runs after
    assert 'href="/admin/django_pgmq/queue/wf_5Fadmin/change/"' in body


def test_a_failed_step_shows_its_error(manager, viewer):
    wid = make_chord(manager)
    [fetch] = [s for s in manager.workflow_status(wid) if s.step == "fetch"]
    manager.fail("wf_admin", fetch.msg_id, {"reason": "no network"})
    response = viewer.get(f"{ADMIN}workflows/{wid}/")
    assert "no network" in response.content.decode()
    assert 'data-status="cancelled"' in response.content.decode()


@pytest.mark.parametrize(
    ("address", "says"),
    [
        ("workflows/abc/", "workflow id must be a whole number of at least 1, got 'abc'"),
        ("workflows/0/", "workflow id must be a whole number"),
        ("workflows/99999999999999999999/", "workflow id must be a whole number"),
        ("workflows/987654321/", "no workflow 987654321"),
        ("workflows/?before=x", "before must be a whole number of at least 1, got 'x'"),
        ("workflows/?before=-3", "before must be a whole number"),
        ("workflows/?status=bogus", "no workflow status 'bogus'"),
    ],
)
def test_a_bad_or_unknown_id_is_a_404_saying_so(manager, viewer, address, says):
    make_chord(manager)
    response = viewer.get(ADMIN + address)
    assert response.status_code == 404
    assert says in html.unescape(text(response))


def test_the_pages_speak_german(manager, viewer, settings):
    settings.LANGUAGE_CODE = "de"
    wid = make_chord(manager)
    listing = viewer.get(f"{ADMIN}workflows/")
    page = viewer.get(f"{ADMIN}workflows/{wid}/")
    assert "Workflows" in text(listing) and "läuft" in text(listing)
    assert "Schritt" in text(page) and "wartet" in text(page)


def test_a_user_without_view_permission_is_refused(manager, client):
    login(client)
    assert client.get(f"{ADMIN}workflows/").status_code == 403


def test_a_workflow_of_more_steps_than_drawn_is_listed_without_a_graph(manager, viewer):
    from django_pgmq.dashboard.workflow_graph import MAX_STEPS
    from django_pgmq.workflows import group

    wid = manager.create_workflow(
        group([step(f"s{i}", "wf_admin", {}) for i in range(MAX_STEPS + 1)])
    )
    response = viewer.get(f"{ADMIN}workflows/{wid}/")
    body = response.content.decode()
    assert response.status_code == 200 and 'id="pgmq-workflow-graph"' not in body
    assert f"{MAX_STEPS + 1} steps: the graph is drawn for at most {MAX_STEPS}." in text(response)
    assert body.count('<tr data-step="s') == MAX_STEPS + 1
    assert "steps page" not in text(response)


def test_a_workflow_of_many_steps_lists_them_a_page_at_a_time(manager, viewer):
    from django_pgmq.dashboard.workflows import STEPS_PER_PAGE
    from django_pgmq.workflows import group

    wid = manager.create_workflow(
        group([step(f"s{i}", "wf_admin", {}) for i in range(STEPS_PER_PAGE + 2)])
    )
    first = viewer.get(f"{ADMIN}workflows/{wid}/")
    assert first.content.decode().count("<tr data-step=") == STEPS_PER_PAGE
    assert "steps page 1 of 2" in text(first) and "?page=2" in first.content.decode()
    second = viewer.get(f"{ADMIN}workflows/{wid}/?page=2").content.decode()
    assert second.count("<tr data-step=") == 2 and f'data-step="s{STEPS_PER_PAGE + 1}"' in second
    beyond = viewer.get(f"{ADMIN}workflows/{wid}/?page=3")
    assert beyond.status_code == 404
    assert f"workflow {wid} has 2 pages of steps" in text(beyond)
