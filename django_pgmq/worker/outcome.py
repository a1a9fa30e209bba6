"""What became of a batch's messages, and a worker's running totals of them."""

from __future__ import annotations

from dataclasses import dataclass, field

from ..records import Message


@dataclass
class Outcome:
    """What became of a batch's messages."""

    done: int = 0
    retried: int = 0
    dead: int = 0
    lost: int = 0
    released: int = 0
    given_up: int = 0  # settled as failed by the handler itself (a task's FAILED verdict)
    set_aside: int = 0  # left in the queue, hidden, by the handler (not a task)
    # Failed, but its retry or dead letter could not be recorded: by then the message
    # was gone (deleted, or taken by another consumer after its vt ran out) or held by
    # another transaction. Not retried by this worker; whoever has it decides.
    unrecorded: int = 0
    following: list[Message] = field(default_factory=list)  # the next batch, already read
    # When (monotonic) the retried messages are visible again: the worker reads them then.
    retry_at: list[float] = field(default_factory=list)

    @property
    def failed(self) -> int:
        """Attempts that failed: retried, dead-lettered, given up, or failed unrecorded."""
        return self.retried + self.dead + self.given_up + self.unrecorded

    @property
    def settled(self) -> int:
        """Messages this batch is done with for good (not retried, not handed back)."""
        return self.done + self.dead + self.given_up + self.set_aside

    @property
    def attempts(self) -> int:
        """Reads of this batch that ended with a verdict (a retried message counts each time)."""
        return self.settled + self.retried + self.unrecorded

    @property
    def finished(self) -> int:
        """Messages settled one way or another (not handed back)."""
        return self.attempts + self.lost

    def add(self, other: Outcome) -> None:
        """Add another batch's counts to these (the worker's running totals)."""
        for name in (
            "done",
            "retried",
            "dead",
            "lost",
            "released",
            "given_up",
            "set_aside",
            "unrecorded",
        ):
            setattr(self, name, getattr(self, name) + getattr(other, name))

    def totals(self) -> str:
        """The worker's last line: messages settled, then attempts (a retry is one more)."""
        kinds = [
            (self.done, "done"),
            (self.dead, "dead-lettered"),
            (self.given_up, "failed"),
            (self.set_aside, "set aside"),
        ]
        parts = ", ".join(f"{n} {what}" for n, what in kinds if n) or "none"
        return (
            f"{self.settled} message(s) settled ({parts}); {self.attempts} attempt(s), "
            f"{self.failed} of them failed"
        )

    def count_settled(self, how: str) -> None:
        """Count a message its handler settled itself (see `Settled`)."""
        if how == "failed":
            self.given_up += 1
        elif how == "dead-lettered":
            self.dead += 1
        else:
            self.set_aside += 1

    def summary(self) -> str:
        parts = [f"{self.done} done", f"{self.retried} retried", f"{self.dead} dead-lettered"]
        parts += [f"{self.given_up} failed"] if self.given_up else []
        parts += [f"{self.set_aside} set aside"] if self.set_aside else []
        parts += [f"{self.lost} gone before they ran"] if self.lost else []
        if self.unrecorded:
            parts += [f"{self.unrecorded} failed but gone or held elsewhere before recorded"]
        parts += [f"{self.released} released"] if self.released else []
        return ", ".join(parts)
