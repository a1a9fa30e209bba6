"""Celery on django-pgmq: the kombu transport ``pgmq://`` (and ``pgmq+postgresql://...``).

Importing this package registers the transport with kombu. It needs no Django
settings: ``pgmq+postgresql://user:pass@host/dbname`` works in a plain Celery app,
while ``pgmq://`` uses the Django database in ``PGMQ["DATABASE"]``.
"""

from __future__ import annotations

from kombu import transport as _kombu_transport

TRANSPORT = "django_pgmq.contrib.celery.transport:Transport"
ALIASES = ("pgmq", "pgmq+postgresql", "pgmq+postgres")


def register() -> None:
    """Point kombu's ``pgmq`` aliases at this transport (kombu ships one of its own)."""
    for alias in ALIASES:
        _kombu_transport.TRANSPORT_ALIASES[alias] = TRANSPORT
        _kombu_transport._transport_cache.pop(alias, None)


register()

__all__ = ["ALIASES", "TRANSPORT", "register"]
