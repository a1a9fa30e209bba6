"""The result ids of workflow steps: version 8 UUIDs that hold their workflow's id.

Standard library only, so the results' admin (which imports nothing of Django's Tasks
API) can link a step's result to its workflow too.
"""

from __future__ import annotations

import secrets
import uuid

KEY_BITS, INDEX_BITS, WORKFLOW_BITS = 46, 14, 62
MAX_STEPS = 10_000  # pgmq.create_workflow's limit; 14 bits of a result id hold an index


def new_key() -> int:
    """A workflow's random key (46 bits): keeps two databases' workflows of one id apart."""
    return secrets.randbits(KEY_BITS)


def step_result_id(key: int, index: int, workflow_id: int) -> uuid.UUID:
    """The result id of step ``index`` of workflow ``workflow_id`` (a version 8 UUID).

    The workflow id sits in the low 62 bits, so any step's result names its workflow
    without a lookup (`workflow_of`); the key and the index fill the rest.
    """
    high = (key >> 12) << INDEX_BITS | index
    value = high << 80 | 8 << 76 | (key & 0xFFF) << 64 | 0b10 << 62 | workflow_id
    return uuid.UUID(int=value)


def workflow_of(result_id: object) -> int | None:
    """The workflow id a result id holds (None: not a workflow step's id)."""
    try:
        value = uuid.UUID(str(result_id))
    except ValueError:
        return None
    if value.version != 8:
        return None
    return value.int & ((1 << WORKFLOW_BITS) - 1)


def key_of(result_id: uuid.UUID) -> int:
    """The workflow key `step_result_id` put in a result id."""
    high = result_id.int >> 80
    return (high >> INDEX_BITS) << 12 | (result_id.int >> 64) & 0xFFF
