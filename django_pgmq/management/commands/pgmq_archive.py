"""manage.py pgmq_archive: move messages to the queue's archive."""

from __future__ import annotations

from ..command_base import RemoveCommand
from ..reference import ReferenceRow


class Command(RemoveCommand):
    help = """Archive messages: move them from pgmq.q_<queue> to pgmq.a_<queue>.

Prints the ids archived. Ids not in the queue are listed on stderr; when none
of them is there, the exit status is 1.

examples:
  manage.py pgmq_archive orders 42
  manage.py pgmq_archive orders 42 43 44
"""
    reference = ReferenceRow(
        usage="`pgmq_archive QUEUE MSG_ID...`",
        prints='`archived 2 message(s) in queue "x": 1 3`; ids not found are listed on stderr',
        fails="none of the ids is in the queue, or an id is not a positive integer",
    )
    method = "archive"
    done = "archived"
