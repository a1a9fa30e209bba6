"""manage.py pgmq_delete: delete messages for good."""

from __future__ import annotations

from ..command_base import RemoveCommand


class Command(RemoveCommand):
    help = """Delete messages from a queue (they are not archived).

Prints the ids deleted. Ids not in the queue are listed on stderr; when none
of them is there, the exit status is 1.

examples:
  manage.py pgmq_delete orders 42
  manage.py pgmq_delete orders 42 43 44
"""
    method = "delete"
    done = "deleted"
