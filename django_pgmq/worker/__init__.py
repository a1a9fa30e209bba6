"""The consumer: handlers registered with `consumer`, run by ``manage.py pgmq_consume``.

``registry`` (handlers), ``config`` (settings per queue), ``worker`` (the
`Worker` and its threads: ``loop``, ``listener``, ``heartbeat``), ``process``
(one batch), ``retry``, ``signals``, ``presence`` and ``sampling`` (the
tables the admin shows).
"""

from .errors import PoisonMessage, Unsettled
from .registry import Consumer, consumer

__all__ = ["Consumer", "PoisonMessage", "Unsettled", "consumer"]
