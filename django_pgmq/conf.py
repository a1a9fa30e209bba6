"""django-pgmq settings: one ``PGMQ`` dict in Django settings, with defaults and checks.

``PGMQ = {"DATABASE": "default"}`` names the database alias the module-level
functions use. Unknown keys and bad values are reported by ``manage.py check``.
"""

from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core import checks

DEFAULTS: dict[str, Any] = {
    "DATABASE": "default",
}


def get(key: str) -> Any:
    """The value of ``PGMQ[key]``, or its default."""
    return {**DEFAULTS, **getattr(settings, "PGMQ", {})}.get(key, DEFAULTS.get(key))


def database_alias() -> str:
    """The database alias module-level functions use."""
    return get("DATABASE")


@checks.register()
def check_settings(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Report a malformed ``PGMQ`` setting before anything runs."""
    from django.db import connections

    errors: list[checks.CheckMessage] = []
    raw = getattr(settings, "PGMQ", {})
    if not isinstance(raw, dict):
        return [checks.Error("PGMQ must be a dict", id="django_pgmq.E001")]
    for key in sorted(set(raw) - set(DEFAULTS)):
        errors.append(
            checks.Error(
                f"PGMQ has an unknown key {key!r}",
                hint=f"known keys: {', '.join(sorted(DEFAULTS))}",
                id="django_pgmq.E002",
            )
        )
    alias = raw.get("DATABASE", DEFAULTS["DATABASE"])
    if alias not in connections.databases:
        errors.append(
            checks.Error(
                f"PGMQ['DATABASE'] is {alias!r}, which is not in DATABASES",
                id="django_pgmq.E003",
            )
        )
    elif connections.databases[alias].get("ENGINE") != "django.db.backends.postgresql":
        errors.append(
            checks.Error(
                f"PGMQ['DATABASE'] {alias!r} is not a PostgreSQL database",
                hint="django-pgmq needs django.db.backends.postgresql",
                id="django_pgmq.E004",
            )
        )
    return errors
