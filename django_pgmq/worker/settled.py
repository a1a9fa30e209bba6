"""What a handler that settles its own messages returns when the outcome is not "done".

Non-atomic handlers that acknowledge their own messages (Django tasks) return a
`Settled` for a message they dealt with otherwise: a final failure (a task whose
result is FAILED), a move to a dead-letter queue, or left in the queue, hidden (a
message that is no task). The worker neither retries nor dead-letters it, and
counts it as such in its totals. Any other return value means "done".
"""

from __future__ import annotations

from dataclasses import dataclass

# How a handler may settle a message itself, other than done.
SETTLED_AS = ("failed", "dead-lettered", "set aside")


@dataclass(frozen=True)
class Settled:
    """A handler's verdict on a message it settled itself (one of `SETTLED_AS`)."""

    how: str

    def __post_init__(self) -> None:
        if self.how not in SETTLED_AS:
            raise ValueError(f"how must be one of {SETTLED_AS}, got {self.how!r}")
