"""manage.py pgmq_workflow: list, show, cancel, on the real database; errors in one line."""

from __future__ import annotations

import json

import pytest

import django_pgmq as pgmq
from django_pgmq.workflows import chain, step
from tests.integration.test_commands import fails, run

pytestmark = pytest.mark.django_db(transaction=True)


def test_list_show_and_cancel(queue) -> None:
    wid = pgmq.create_workflow(chain(step("a", queue, {"n": 1}), step("b", queue, {"n": 2})))
    (first,) = pgmq.read(queue, vt=30, qty=10)
    pgmq.complete(queue, first.msg_id, {"ok": 1})

    out, _ = run("pgmq_workflow", "show", str(wid))
    lines = out.splitlines()
    assert lines[0].split() == ["step", "queue", "msg_id", "status", "result", "error", "finished"]
    assert lines[2].split()[:5] == ["a", queue, str(first.msg_id), "done", '{"ok":']
    assert lines[3].split()[3] == "sent"
    out, _ = run("pgmq_workflow", "show", str(wid), "--json")
    assert [json.loads(x)["status"] for x in out.splitlines()] == ["done", "sent"]

    out, _ = run("pgmq_workflow", "list", "--status", "running", "--json")
    (mine,) = [r for r in map(json.loads, out.splitlines()) if r["workflow_id"] == wid]
    assert (mine["status"], mine["steps_done"], mine["steps_total"]) == ("running", 1, 2)
    out, _ = run("pgmq_workflow", "list")
    assert any(line.split()[:3] == [str(wid), "running", "1/2"] for line in out.splitlines())

    out, _ = run("pgmq_workflow", "cancel", str(wid))
    assert out.strip() == f"workflow {wid}: 1 step(s) cancelled"
    assert pgmq.metrics(queue).queue_length == 0


def test_errors_are_one_line() -> None:
    assert fails("pgmq_workflow", "show", "999999999") == "workflow 999999999 does not exist"
    assert "does not exist" in fails("pgmq_workflow", "cancel", "999999999")
