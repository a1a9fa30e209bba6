"""How long and how big each phase runs: ``tiny`` (the smoke test), ``quick`` and ``full``."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Profile:
    name: str
    send_window: float  # seconds of sending per send run
    read_window: float  # at most this many seconds of reading per read run
    prefill: dict[int, int]  # read runs: messages in the queue before they start, by batch
    e2e_warmup: float  # end to end: seconds before the window opens
    e2e_window: float  # end to end: seconds measured
    notify_count: int  # notify runs: messages sent one by one
    producers: int
    consumers: int
    workers: int  # pgmq_consume processes for the worker targets
    backlog: int  # end to end: producers pause while the queue holds this many
    worker_batch_target: bool  # also measure the worker with a batch handler


PROFILES = {
    "tiny": Profile(
        "tiny", 0.15, 0.15, {1: 200, 10: 1000, 100: 3000}, 0.3, 0.5, 5, 1, 2, 1, 500, False
    ),
    "quick": Profile(
        "quick", 0.6, 0.6, {1: 4000, 10: 15000, 100: 40000}, 0.5, 2.0, 40, 2, 4, 4, 5000, False
    ),
    "full": Profile(
        "full",
        8.0,
        8.0,
        {1: 40000, 10: 160000, 100: 400000},
        3.0,
        30.0,
        300,
        2,
        4,
        4,
        10000,
        True,
    ),
}
