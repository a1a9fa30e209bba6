"""Records of topic routing (sql/60_topics.sql): bindings, routes and deliveries."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass(frozen=True)
class TopicBinding:
    """A row of ``pgmq.list_topic_bindings()``: messages whose key matches go to the queue."""

    pattern: str
    queue_name: str
    bound_at: datetime
    compiled_regex: str
    database: str = ""  # the alias of the database holding the binding (and the queue)


@dataclass(frozen=True)
class TopicRoute:
    """A row of ``pgmq.test_routing()``: a binding a routing key would reach."""

    pattern: str
    queue_name: str
    compiled_regex: str
    database: str = ""  # the alias of the database holding the binding (and the queue)


@dataclass(frozen=True)
class TopicDelivery:
    """A row of ``pgmq.send_batch_topic()``: one message stored in one queue."""

    queue_name: str
    msg_id: int
    database: str = ""  # the alias of the database holding the queue
