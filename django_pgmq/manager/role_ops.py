"""QueueManager methods: grant an application role what message operations need, or revoke it.

The owner role runs ``migrate`` and owns everything in schema ``pgmq``; an application
role (LOGIN, not superuser, never CREATE on ``pgmq``) sends, reads, runs workers, Tasks
and Celery, and the admin's read paths. The grant is made in SQL (``pgmq.grant_app_role``,
sql/99_roles.sql; the role is recorded in ``pgmq.app_role``) so deployments without
Django call the same function; Django adds its own tables.
"""

from __future__ import annotations

from django.apps import apps

from .plumbing import Base


def app_tables() -> list[str]:
    """The tables of django-pgmq's own Django models outside ``pgmq`` (worker records, ...)."""
    models = apps.get_app_config("django_pgmq").get_models()
    return sorted(m._meta.db_table for m in models if m._meta.managed)


class RoleOps(Base):
    """Grant or revoke an application role's privileges on this database's queues."""

    def grant_app_role(
        self, role: str, *, create_queues: bool = False, manage_queues: bool = False
    ) -> None:
        """Give ``role`` every message operation on every queue, present and future.

        With ``create_queues`` it may also create queues and drop those it created; with
        ``manage_queues`` change queues' attributes, schedules and topic bindings. Run it
        as the owner (the role that ran ``migrate``); it is idempotent, and granting
        again sets both flags anew.
        """
        params = {
            "role": role,
            "create_queues": create_queues,
            "manage_queues": manage_queues,
            "tables": app_tables(),
        }
        self._fetch("grant_app_role", params, None)

    def revoke_app_role(self, role: str) -> None:
        """Take back what `grant_app_role` gave ``role``; queues it created stay (the owner's)."""
        self._fetch("revoke_app_role", {"role": role, "tables": app_tables()}, None)
