"""The Python face of workflows: the builder, the manager's calls, their errors."""

from __future__ import annotations

import asyncio

import pytest
from asgiref.sync import sync_to_async
from django.db import connections

import django_pgmq as pgmq
from django_pgmq import InvalidArgument, QueueNotFound, WorkflowNotFound
from django_pgmq.workflows import chain, chord, group, step

pytestmark = pytest.mark.django_db(transaction=True)


def test_the_builder_fills_in_after_for_nested_shapes() -> None:
    flow = chain(
        step("fetch", "q", {"u": 1}, headers={"h": 1}),
        chord(
            [step("p1", "q", 1), chain(step("p2", "q", 2), step("p3", "q", 3))],
            step("m", "r", 0),
        ),
        group([step("x", "q", 0), step("y", "q", 0)]),
    )
    assert flow.steps() == [
        {"step": "fetch", "queue": "q", "message": {"u": 1}, "headers": {"h": 1}},
        {"step": "p1", "queue": "q", "message": 1, "after": ["fetch"]},
        {"step": "p2", "queue": "q", "message": 2, "after": ["fetch"]},
        {"step": "p3", "queue": "q", "message": 3, "after": ["p2"]},
        {"step": "m", "queue": "r", "message": 0, "after": ["p1", "p3"]},
        {"step": "x", "queue": "q", "message": 0, "after": ["m"]},
        {"step": "y", "queue": "q", "message": 0, "after": ["m"]},
    ]


@pytest.mark.parametrize(
    ("build", "text"),
    [
        (lambda: chain(), "chain needs at least one step"),
        (lambda: group(step("a", "q", 1)), "group takes a list"),
        (lambda: chord([1], step("a", "q", 1)), "chord: 1 is not a step"),
        (lambda: chord([step("a", "q", 1)], "b"), "the callback 'b' is not a step"),
        (lambda: step("", "q", 1), "name must be a non-empty string"),
        (lambda: step("a", "q", 1, headers=[1]), 'workflow step "a": headers must be a dict'),
    ],
)
def test_the_builder_refuses_bad_shapes(build, text) -> None:
    with pytest.raises(InvalidArgument, match=text):
        build()


def test_a_chord_runs_through_the_module_api(queue, manager) -> None:
    flow = chord([step("a", queue, {"n": 1}), step("b", queue, {"n": 2})], step("c", queue, {}))
    wid = pgmq.create_workflow(flow)
    first = pgmq.read(queue, vt=30, qty=10)
    by_step = {m.headers["workflow"]["step"]: m.msg_id for m in first}
    assert pgmq.complete(queue, by_step["a"], {"sum": 1}) is True
    assert pgmq.complete(queue, by_step["a"], {"sum": 1}) is False  # gone already
    assert pgmq.fail(queue, by_step["b"], "boom") is True
    steps = {s.step: s for s in pgmq.workflow_status(wid)}
    assert (steps["a"].status, steps["a"].result) == ("done", {"sum": 1})
    assert (steps["b"].status, steps["b"].error) == ("failed", "boom")
    assert steps["c"].status == "cancelled" and steps["c"].msg_id is None
    graph = pgmq.QueueManager().workflow_graph(wid)
    assert [(g["step"], g["after"], g["message"]) for g in graph] == [
        ("a", [], {"n": 1}),
        ("b", [], {"n": 2}),
        ("c", ["a", "b"], {}),
    ]
    (info,) = [w for w in pgmq.list_workflows() if w.workflow_id == wid]
    assert (info.status, info.steps_done, info.steps_total, info.database) == (
        "failed",
        1,
        3,
        "default",
    )
    assert [w.workflow_id for w in pgmq.list_workflows(status="failed")].count(wid) == 1
    assert pgmq.cancel_workflow(wid) == 0


def test_async_twins_and_continue(queue) -> None:
    async def run() -> list[pgmq.WorkflowStep]:
        flow = chain(step("a", queue, 1), step("b", queue, 2))
        wid = await pgmq.acreate_workflow(flow, on_failure="continue")
        (a,) = await pgmq.aread(queue, vt=30, qty=10)
        await pgmq.afail(queue, a.msg_id, {"e": 1})
        (b,) = await pgmq.aread(queue, vt=30, qty=10)
        assert b.headers["workflow"]["results"] == {"a": {"error": {"e": 1}}}
        await pgmq.acomplete(queue, b.msg_id, [1, 2])
        try:
            return await pgmq.aworkflow_status(wid)
        finally:
            await sync_to_async(connections.close_all)()

    steps = asyncio.run(run())
    assert [(s.step, s.status, s.result) for s in steps] == [
        ("a", "failed", None),
        ("b", "done", [1, 2]),
    ]


def test_errors_name_the_problem(queue, settings) -> None:
    with pytest.raises(WorkflowNotFound, match="workflow 999999999 does not exist"):
        pgmq.workflow_status(999999999)
    with pytest.raises(QueueNotFound, match='queue "wf_nope" does not exist: workflow step "a"'):
        pgmq.create_workflow([{"step": "a", "queue": "wf_nope", "message": 1}])
    with pytest.raises(InvalidArgument, match='workflow step "a": "after" names "z"'):
        pgmq.create_workflow([{"step": "a", "queue": queue, "message": 1, "after": ["z"]}])
    with pytest.raises(InvalidArgument, match="on_failure must be 'cancel' or 'continue'"):
        pgmq.create_workflow(chain(step("a", queue, 1)), on_failure="stop")
    with pytest.raises(InvalidArgument, match="workflow status is one of"):
        pgmq.list_workflows(status="odd")
    settings.PGMQ = {"DATABASE": "default", "QUEUE_DATABASES": [("far_*", "other")]}
    with pytest.raises(InvalidArgument) as caught:
        pgmq.create_workflow(chain(step("a", queue, 1), step("b", "far_q", 1)))
    text = str(caught.value)
    assert f'queue "{queue}" is in database "default"' in text
    assert 'queue "far_q" in database "other"' in text


def test_retention_removes_finished_workflows_only(queue, manager) -> None:
    done = pgmq.create_workflow(chain(step("a", queue, 1)))
    running = pgmq.create_workflow(chain(step("b", queue, 1), step("c", queue, 1)))
    for message in pgmq.read(queue, vt=30, qty=10):
        if message.headers["workflow"]["id"] == done:
            pgmq.delete(queue, message.msg_id)
    assert manager.enforce_workflow_retention(keep=3600) == 0  # finished just now: kept
    assert manager.enforce_workflow_retention(keep=0) >= 1
    with pytest.raises(WorkflowNotFound):
        pgmq.workflow_status(done)
    assert [s.status for s in pgmq.workflow_status(running)] == ["sent", "waiting"]
    with pytest.raises(InvalidArgument, match="0 or more seconds"):
        manager.enforce_workflow_retention(keep=-1)
