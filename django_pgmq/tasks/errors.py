"""Errors recorded in task results (their class paths are stored; Django imports them back)."""

from __future__ import annotations


class WorkerLost(Exception):
    """The worker running an attempt stopped (killed, out of memory) before it finished.

    Recorded for that attempt when the task's message comes back to a worker
    while its result still says RUNNING; it counts as a failed attempt.
    """


class RetryTask(Exception):
    """Raised to the worker's processor: the attempt failed and the task runs again later.

    The processor makes the message visible again after its retry backoff, and logs
    the task's own error (the one this was raised while handling), not this.
    """

    reports_cause = True


class WorkflowCancelled(Exception):
    """Recorded in the result of a workflow step that never ran: its workflow cancelled it.

    A parent failed under ``on_failure="cancel"``, or the workflow was cancelled.
    """
