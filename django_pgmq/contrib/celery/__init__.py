"""Celery on django-pgmq: the kombu transport ``django-pgmq://`` (and ``django-pgmq+postgresql://``).

Importing this package registers the scheme ``django-pgmq`` with kombu. It needs no
Django settings: ``django-pgmq+postgresql://user:pass@host/dbname`` works in a plain
Celery app, while ``django-pgmq://`` uses the Django database in ``PGMQ["DATABASE"]``.

kombu 5.7 ships a transport of its own under ``pgmq://`` (for the pgmq extension);
this package leaves that name alone. The old ``pgmq://`` URLs of django-pgmq 0.1 keep
working only where they can only mean ours: the ``CELERY_BROKER_URL`` (or
``BROKER_URL``) of a Django project with django_pgmq installed and no
``CELERY_BROKER_TRANSPORT``. The app then points ``pgmq`` at this transport for that
process and warns (`adopt_legacy_scheme`).
"""

from __future__ import annotations

import warnings
from typing import Any

from django.core import checks
from kombu import transport as _kombu_transport

TRANSPORT = "django_pgmq.contrib.celery.transport:Transport"
SCHEME = "django-pgmq"
ALIASES = (SCHEME,)  # kombu reads "django-pgmq+postgresql://..." as this alias + a URL
LEGACY_SCHEME = "pgmq"


def _point(alias: str) -> None:
    _kombu_transport.TRANSPORT_ALIASES[alias] = TRANSPORT
    _kombu_transport._transport_cache.pop(alias, None)


def register() -> None:
    """Register the ``django-pgmq`` scheme with kombu (kombu's own ``pgmq`` stays kombu's)."""
    for alias in ALIASES:
        _point(alias)


def uses_legacy_scheme(url: object) -> bool:
    """Whether a broker URL names the old scheme: ``pgmq://...`` or ``pgmq+postgresql://...``."""
    if not isinstance(url, str) or "://" not in url:
        return False
    scheme = url.split("://", 1)[0].split("+", 1)[0]
    return scheme.lower() == LEGACY_SCHEME


def adopt_legacy_scheme(setting: str) -> None:
    """Make ``pgmq://`` mean this transport in this process, with a DeprecationWarning.

    ``setting`` names where the old URL was found (never the URL: it may hold a password).
    """
    _point(LEGACY_SCHEME)
    warnings.warn(
        f"{setting} uses the scheme 'pgmq', which is kombu's own pgmq transport; "
        f"django-pgmq's is '{SCHEME}' ('{SCHEME}://', '{SCHEME}+postgresql://...'). "
        "In this project 'pgmq' still means django-pgmq, for now.",
        DeprecationWarning,
        stacklevel=2,
    )


def legacy_broker_setting() -> str | None:
    """The Django setting holding an old ``pgmq://`` broker URL meant for us, if any.

    None when a broker transport is named explicitly (``CELERY_BROKER_TRANSPORT``):
    that one is used, whatever the URL's scheme.
    """
    from django.conf import settings

    if not settings.configured:
        return None
    if getattr(settings, "CELERY_BROKER_TRANSPORT", None) or getattr(
        settings, "BROKER_TRANSPORT", None
    ):
        return None
    for name in ("CELERY_BROKER_URL", "BROKER_URL"):
        if uses_legacy_scheme(getattr(settings, name, None)):
            return name
    return None


@checks.register()
def check_broker_scheme(app_configs: Any = None, **kwargs: Any) -> list[checks.CheckMessage]:
    """Tell an operator that the broker URL uses the old scheme."""
    setting = legacy_broker_setting()
    if setting is None:
        return []
    return [
        checks.Warning(
            f"{setting} uses the scheme 'pgmq', which is kombu's own pgmq transport",
            hint=f"write '{SCHEME}://' (or '{SCHEME}+postgresql://...'): 'pgmq' is deprecated",
            id="django_pgmq.W001",
        )
    ]


register()

__all__ = [
    "ALIASES",
    "LEGACY_SCHEME",
    "SCHEME",
    "TRANSPORT",
    "adopt_legacy_scheme",
    "check_broker_scheme",
    "legacy_broker_setting",
    "register",
    "uses_legacy_scheme",
]
