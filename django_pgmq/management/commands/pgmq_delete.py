"""manage.py pgmq_delete: delete messages for good."""

from __future__ import annotations

from ..command_base import RemoveCommand
from ..reference import ReferenceRow


class Command(RemoveCommand):
    help = """Delete messages from a queue (they are not archived).

Prints the ids deleted. Ids not in the queue are listed on stderr; when none
of them is there, the exit status is 1.

examples:
  manage.py pgmq_delete orders 42
  manage.py pgmq_delete orders 42 43 44
"""
    reference = ReferenceRow(
        usage="`pgmq_delete QUEUE MSG_ID...`",
        prints='`deleted 2 message(s) in queue "x": 1 3`; ids not found are listed on stderr',
        fails="none of the ids is in the queue, or an id is not a positive integer",
    )
    method = "delete"
    done = "deleted"
