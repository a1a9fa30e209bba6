"""Which kombu transport a broker URL names once django_pgmq is loaded.

Ours is ``django-pgmq://``; kombu's own ``pgmq://`` stays kombu's, except in a
project whose ``CELERY_BROKER_URL`` still uses it (django-pgmq 0.1's scheme): there
it means ours, with a DeprecationWarning and a system check warning. Each case
runs in a fresh interpreter, since Django settings and kombu's aliases are global.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import json, sys, warnings
warnings.simplefilter("always")
import django
from django.conf import settings
from django.core import checks
from kombu import Connection
from kombu.transport import resolve_transport

extra = json.loads(sys.argv[1])
before = resolve_transport("pgmq").__module__
settings.configure(
    INSTALLED_APPS=["pgtrigger", "django_pgmq"],
    DATABASES={"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "unused"}},
    **extra,
)
with warnings.catch_warnings(record=True) as caught:
    django.setup()

def transport_of(url):
    return Connection(url).get_transport_cls().__module__

print(json.dumps({
    "before": before,
    "pgmq": resolve_transport("pgmq").__module__,
    "ours": transport_of("django-pgmq://"),
    "ours_url": transport_of("django-pgmq+postgresql://u:p@db.example.com/app"),
    "legacy_url": transport_of("pgmq+postgresql://u:p@db.example.com/app"),
    "deprecations": [str(w.message) for w in caught if w.category is DeprecationWarning],
    "checks": [m.id for m in checks.run_checks() if m.id.startswith("django_pgmq.W")],
}))
"""


def loaded(**settings: str) -> dict:
    """What kombu resolves after ``django.setup()`` with ``settings`` added."""
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT, json.dumps(settings)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    return json.loads(out.splitlines()[-1])


OURS = "django_pgmq.contrib.celery.transport"
KOMBUS = "kombu.transport.pgmq"


def test_our_scheme_is_ours_and_kombus_pgmq_stays_kombus():
    found = loaded(CELERY_BROKER_URL="django-pgmq://")
    assert found["before"] == KOMBUS
    assert found["ours"] == OURS
    assert found["ours_url"] == OURS
    assert found["pgmq"] == KOMBUS
    assert found["legacy_url"] == KOMBUS
    assert found["deprecations"] == []
    assert found["checks"] == []


def test_a_project_without_a_broker_url_leaves_pgmq_to_kombu():
    found = loaded()
    assert found["pgmq"] == KOMBUS
    assert found["ours"] == OURS
    assert found["deprecations"] == []


@pytest.mark.parametrize("url", ["pgmq://", "pgmq+postgresql://u:secret@db.example.com/app"])
def test_the_old_scheme_in_the_projects_broker_url_still_means_ours_with_warnings(url):
    found = loaded(CELERY_BROKER_URL=url)
    assert found["pgmq"] == OURS
    assert found["legacy_url"] == OURS
    [warning] = found["deprecations"]
    assert "CELERY_BROKER_URL" in warning and "django-pgmq://" in warning
    assert "secret" not in warning
    assert found["checks"] == ["django_pgmq.W001"]


def test_an_explicit_broker_transport_keeps_kombus_pgmq():
    found = loaded(CELERY_BROKER_URL="pgmq://", CELERY_BROKER_TRANSPORT="kombu.transport.pgmq")
    assert found["pgmq"] == KOMBUS
    assert found["deprecations"] == []
    assert found["checks"] == []


def test_our_urls_round_trip_through_kombu():
    from kombu import Connection

    import django_pgmq.contrib.celery  # noqa: F401  (registers django-pgmq://)

    for url in (
        "django-pgmq+postgresql://u:p@db.example.com:5433/app",
        "django-pgmq://u:p@db.example.com:5433/app",
    ):
        connection = Connection(url)
        assert connection.transport_cls == "django-pgmq"
        again = Connection(connection.as_uri(include_password=True))
        assert again.as_uri(include_password=True) == connection.as_uri(include_password=True)
        assert again.get_transport_cls().__module__ == OURS
        assert "db.example.com" in connection.as_uri()
