"""manage.py pgmq_grant: give an application role what message operations need, or revoke it."""

from __future__ import annotations

from typing import Any

from ..command_base import PgmqCommand
from ..reference import ReferenceRow


class Command(PgmqCommand):
    help = """Grant a database role (an application role: LOGIN, not superuser) every
message operation on every queue of this database, present and future: send, read,
archive, delete, set_vt, purge, metrics, the worker, the Tasks backend, the Celery
transport and the admin's read paths. Run it as the owner (the role that ran
migrate; it owns every queue). --create-queues also lets the role create queues and
drop the ones it created; --manage-queues lets it change queues' attributes,
schedules and topic bindings. Granting again sets both anew. --revoke takes
everything back. The SQL is pgmq.grant_app_role(role, create_queues, tables,
manage_queues) and pgmq.revoke_app_role(role), for deployments without Django.

examples:
  manage.py pgmq_grant app_user
  manage.py pgmq_grant app_user --create-queues
  manage.py pgmq_grant ops_user --manage-queues
  manage.py pgmq_grant app_user --revoke
"""
    reference = ReferenceRow(
        usage="`pgmq_grant ROLE [--create-queues] [--manage-queues]` / `--revoke`",
        prints="""`role "r" may run message operations on every queue` and what the options add,
        or `revoked the pgmq privileges of role "r"`. See [Two roles](../guide/roles.md)""",
        fails="""the role does not exist or is (a member of) the owner; the caller is not the
        owner of schema `pgmq`""",
    )

    def add_arguments(self, parser: Any) -> None:
        parser.add_argument("role", metavar="ROLE", help="The database role to grant.")
        parser.add_argument(
            "--create-queues",
            action="store_true",
            help="Also let the role create queues and drop the queues it created.",
        )
        parser.add_argument(
            "--manage-queues",
            action="store_true",
            help="Also let the role change queues' attributes, schedules and topic bindings.",
        )
        parser.add_argument(
            "--revoke", action="store_true", help="Take back what an earlier grant gave."
        )

    def handle(self, *args: Any, **options: Any) -> None:
        manager, role = self.manager(options), options["role"]
        if options["revoke"]:
            manager.revoke_app_role(role)
            self.stdout.write(f'revoked the pgmq privileges of role "{role}"')
            return
        manager.grant_app_role(
            role, create_queues=options["create_queues"], manage_queues=options["manage_queues"]
        )
        extras = []
        if options["create_queues"]:
            extras.append("may create and drop its own queues")
        if options["manage_queues"]:
            extras.append("may change queues' attributes, schedules and topic bindings")
        extra = "".join(f" and {e}" for e in extras)
        self.stdout.write(f'role "{role}" may run message operations on every queue{extra}')
