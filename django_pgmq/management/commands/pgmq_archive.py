"""manage.py pgmq_archive: move messages to the queue's archive."""

from __future__ import annotations

from ..command_base import RemoveCommand


class Command(RemoveCommand):
    help = """Archive messages: move them from pgmq.q_<queue> to pgmq.a_<queue>.

Prints the ids archived. Ids not in the queue are listed on stderr; when none
of them is there, the exit status is 1.

examples:
  manage.py pgmq_archive orders 42
  manage.py pgmq_archive orders 42 43 44
"""
    method = "archive"
    done = "archived"
