"""Prefetch accounting and settlement of delivered messages.

kombu's virtual QoS re-sends a copy of every unacknowledged message when a channel
closes. Here a delivered message stays in its pgmq queue, hidden by its visibility
timeout, until it is settled: ack archives (or deletes) it, reject with requeue and
a warm shutdown make it visible again at once, in place, under the same ``msg_id``.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Iterable
from typing import TYPE_CHECKING

from kombu.transport import virtual

if TYPE_CHECKING:
    from .channel import Channel

logger = logging.getLogger(__name__)


def delivery_tag(queue: str, msg_id: int, read_ct: int) -> str:
    """A tag naming one delivery: pgmq queue, message id and read count."""
    return f"{queue}:{msg_id}:{read_ct}"


def by_queue(tags: Iterable[str]) -> dict[str, list[int]]:
    """Message ids of these delivery tags, grouped by pgmq queue."""
    grouped: dict[str, list[int]] = defaultdict(list)
    for tag in tags:
        queue, msg_id, _ = tag.rsplit(":", 2)
        grouped[queue].append(int(msg_id))
    return grouped


class QoS(virtual.QoS):
    """Prefetch limits as kombu's, but acks and requeues act on the pgmq rows."""

    channel: Channel

    def ack(self, delivery_tag: str) -> None:
        """Archive (or delete) the message; may be called from a pool thread."""
        super().ack(delivery_tag)
        self.channel.settle([delivery_tag])

    def reject(self, delivery_tag: str, requeue: bool = False) -> None:
        """Requeue: visible again now, in place. Otherwise settled like an ack."""
        self._quick_ack(delivery_tag)
        if requeue:
            self.channel.release([delivery_tag])
        else:
            self.channel.settle([delivery_tag])

    def held(self) -> list[str]:
        """Tags delivered and not yet settled (for renewing their visibility)."""
        dirty = self._dirty
        return [tag for tag in list(self._delivered) if tag not in dirty]

    def restore_unacked(self) -> list:
        """Make every unsettled message visible now instead of sending copies."""
        self._flush()
        tags = list(self._delivered)
        self._delivered.clear()
        try:
            self.channel.flush_acks()
            if tags:
                self.channel.release(tags)
        except Exception as exc:
            # Nothing is lost: the rows are still in their queues and come back
            # when their visibility timeout passes.
            logger.warning(
                "could not settle or release %d held message(s) (%s); they return after "
                "the visibility timeout",
                len(tags),
                exc,
            )
        return []
