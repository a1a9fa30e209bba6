"""Deterministic mapping of Celery queue names to pgmq queue names.

Celery names its pidbox, reply and event queues ``celery@host.celery.pidbox``,
``<uuid>.reply.celery.pidbox`` or ``celeryev.<uuid>``: too long for pgmq's 47
characters, or with ``@`` and ``.``, which pgmq refuses. A name pgmq accepts is
used as it is (so other pgmq clients see the queue by its Celery name); any other
becomes a readable lower-case stem plus a hash of the whole name, which is stable
across processes and machines and never collides in practice (40 bits).
"""

from __future__ import annotations

import hashlib
import re
from functools import lru_cache

from django_pgmq.errors import InvalidQueueName
from django_pgmq.names import MAX_QUEUE_NAME_LENGTH, validate_queue_name

HASH_LENGTH = 10
_NOT_WORD = re.compile(r"[^a-z0-9]+")


@lru_cache(maxsize=4096)
def pgmq_queue_name(celery_name: str, prefix: str = "") -> str:
    """The pgmq queue holding Celery queue ``celery_name`` (after an optional prefix)."""
    if not isinstance(celery_name, str) or not celery_name:
        raise InvalidQueueName(f"a Celery queue name must be a non-empty string: {celery_name!r}")
    name = prefix + celery_name
    try:
        return validate_queue_name(name)
    except InvalidQueueName:
        pass
    digest = hashlib.blake2b(name.encode("utf-8"), digest_size=HASH_LENGTH // 2).hexdigest()
    room = MAX_QUEUE_NAME_LENGTH - HASH_LENGTH - 1
    stem = _NOT_WORD.sub("_", name.lower()).strip("_")[:room].rstrip("_") or "q"
    return f"{stem}_{digest}"
