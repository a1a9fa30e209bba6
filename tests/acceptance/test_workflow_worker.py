"""The worker runs workflow steps: a handler's return value is the step's result, a handler
out of retries fails the step (its dependents are cancelled)."""

from __future__ import annotations

import pytest

import django_pgmq as pgmq
from django_pgmq.workflows import chain, chord, step
from tests.worker_process import start_worker_fixture  # noqa: F401

pytestmark = pytest.mark.slow

FAST = ("--poll-interval", "0.05", "--until-empty", "--heartbeat", "0.5")


@pytest.fixture
def dead_letters(queue, manager):
    name = f"{queue}_dlq"
    yield name
    manager.drop_queue(name)


@pytest.mark.parametrize("handler", ["handle_returning", "handle_returning_outside"])
def test_return_values_flow_into_the_callback_and_a_failure_cancels(
    queue, dead_letters, start_worker, handler
) -> None:
    """Atomic (recorded in the chunk's transaction) and not atomic (recorded, then acknowledged)."""
    good = pgmq.create_workflow(
        chord([step("a", queue, {"n": 1}), step("b", queue, {"n": 2})], step("sum", queue, {}))
    )
    bad = pgmq.create_workflow(
        chain(step("x", queue, {"fail_times": 99}), step("y", queue, {"n": 3}))
    )
    worker = start_worker(
        queue,
        "--handler",
        f"tests.handlers.{handler}",
        "--max-receives",
        "2",
        "--retry-delay",
        "0.05",
        *FAST,
    )
    assert worker.wait() == 0

    steps = {s.step: s for s in pgmq.workflow_status(good)}
    assert [steps[n].status for n in ("a", "b", "sum")] == ["done", "done", "done"]
    assert steps["a"].result == {"message": {"n": 1}, "results": None}
    assert steps["sum"].result == {
        "message": {},
        "results": {
            "a": {"message": {"n": 1}, "results": None},
            "b": {"message": {"n": 2}, "results": None},
        },
    }
    failed = {s.step: s for s in pgmq.workflow_status(bad)}
    assert failed["x"].status == "failed"
    assert failed["x"].error == {
        "error": "RuntimeError: planned failure on read 2",
        "dead_letter_queue": dead_letters,
    }
    assert failed["y"].status == "cancelled"
    assert pgmq.metrics(queue).queue_length == 0
