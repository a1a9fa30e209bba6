"""No-op handlers for ``pgmq_consume --handler benchmarks.handlers.<name>`` in the benchmark."""

from __future__ import annotations

import django_pgmq


def noop(message: django_pgmq.Message) -> None:
    """Does nothing: what is measured is the worker around it."""


@django_pgmq.consumer(batch_handler=True)
def noop_batch(messages: list[django_pgmq.Message]) -> None:
    """Does nothing with a whole batch (one acknowledgement per batch)."""
