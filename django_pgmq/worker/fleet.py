"""One process, several databases: run one `Worker` per database together.

Each worker has its own LISTEN connection, consumer threads, heartbeat and
worker row, so a database that goes down stops only its own queues (its threads
back off and reconnect, its listener waits for the server and catches up) while
the others keep running. They share the main thread's signal handling, the
``--max-messages`` budget and the exit conditions.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import signals
from .budget import Budget
from .worker import Worker


def run_workers(workers: Sequence[Worker]) -> int:
    """Start every worker, wait for a reason to stop, stop them all; the exit status (0)."""
    budget = Budget(workers[0].options.max_messages)
    for worker in workers:
        worker.budget = budget  # --max-messages counts across databases
    with signals.graceful() as caught:
        for worker in workers:
            worker._caught = caught
        try:
            for worker in workers:
                worker._start()
            _wait(workers, caught)
        finally:
            reason = next((w.stop_reason for w in workers if w.stop_reason), "shutting down")
            for worker in workers:
                worker.stop(reason)
            for worker in workers:
                worker._shutdown()
    return 0


def _wait(workers: Sequence[Worker], caught: signals.Caught) -> None:
    """Until one stops: act on a signal (see signals.py), an exit condition, or `stop`."""
    options = workers[0].options
    check = min(0.2, options.poll_interval)
    first = workers[0]
    while not any(w.stopping.is_set() for w in workers):
        limit = options.max_messages
        finished = sum(w.finished for w in workers)
        if caught.reason is not None:
            first.stop(caught.reason)
        elif limit is not None and finished >= limit:
            first.stop(f"handled {finished} message(s) (--max-messages {limit})")
        elif options.until_empty and all(w.idle() for w in workers):
            first.stop("--until-empty: no message visible, none held, no retry waiting")
        else:
            first.stopping.wait(check)
