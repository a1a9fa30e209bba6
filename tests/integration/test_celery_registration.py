"""Loading the Django app points kombu's "pgmq" transport name at ours."""

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = """
import django
from django.conf import settings
from kombu.transport import resolve_transport

before = resolve_transport("pgmq").__module__
settings.configure(
    INSTALLED_APPS=["pgtrigger", "django_pgmq"],
    DATABASES={"default": {"ENGINE": "django.db.backends.postgresql", "NAME": "unused"}},
)
django.setup()
print(before)
print(resolve_transport("pgmq").__module__)
print(resolve_transport("pgmq+postgresql").__module__)
"""


def test_django_setup_registers_the_transport():
    out = subprocess.run(
        [sys.executable, "-c", SCRIPT],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout.split()
    before, after, explicit = out
    assert not before.startswith("django_pgmq")  # kombu's own transport of that name
    assert after.startswith("django_pgmq.contrib.celery")
    assert explicit.startswith("django_pgmq.contrib.celery")
