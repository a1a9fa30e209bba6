"""Importing the package stays light: no Django ORM until a queue function is used."""

import subprocess
import sys

SCRIPT = """
import sys
import django_pgmq
assert "django.db" not in sys.modules, "django.db imported eagerly"
from django_pgmq import send, QueueManager, consumer
assert send.__name__ == "send" and QueueManager.__name__ == "QueueManager"
assert callable(consumer)
assert django_pgmq.read is django_pgmq.read  # resolved once
try:
    django_pgmq.no_such_thing
except AttributeError as exc:
    assert "no_such_thing" in str(exc)
else:
    raise SystemExit("missing attribute did not raise")
print("ok")
"""


def test_import_is_lazy_and_names_resolve():
    out = subprocess.run([sys.executable, "-c", SCRIPT], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"
