"""The admin overview and a sampler round, timed in a Django process on a benchmark database.

``benchmarks.many_queues`` runs it as ``python -m benchmarks.admin_overview`` with
``DATABASE_URL`` set to django-pgmq's scratch database (pgmq has no such page). It
migrates Django's own apps there, times one queue sampler round (all queues due), then
the overview through Django's test Client (first page by name, and by depth), and
prints the figures as JSON on its last line.
"""

from __future__ import annotations

import json
import os
import statistics
import time
from datetime import timedelta

SAMPLES = 5


def _median_ms(call) -> float:
    times = []
    for _ in range(SAMPLES):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main() -> int:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.db import connection
    from django.test import Client

    from django_pgmq.internal import InternalManager
    from django_pgmq.models import QueueSample
    from django_pgmq.worker.sampling import sample_all_queues

    call_command("migrate", verbosity=0, interactive=False)
    QueueSample.objects.all().delete()  # every queue due, as on the first round
    start = time.perf_counter()
    sample_all_queues(InternalManager(), interval=60, retention=timedelta(days=1))
    sampler_ms = (time.perf_counter() - start) * 1000
    user, _ = User.objects.get_or_create(
        username="bench", defaults={"is_staff": True, "is_superuser": True}
    )
    client = Client()
    client.force_login(user)

    def get(**params: str) -> None:
        response = client.get("/admin/django_pgmq/queue/", params)
        if response.status_code != 200:
            raise RuntimeError(f"the overview answered {response.status_code}")

    get()  # warm: templates, translations
    figures = {
        "admin overview (ms)": _median_ms(get),
        "admin overview by depth (ms)": _median_ms(lambda: get(o="queue_length", dir="desc")),
        "queue sampler round (ms)": sampler_ms,
    }
    from .sqlfile import statement

    with connection.cursor() as cursor:
        for name, key in (
            ("pgstat_depth_order", "depth order from pgstat estimates (ms)"),
            ("per_queue_stats", "old overview: counts of 2,000 queues (ms)"),
        ):
            query = statement("admin_overview.sql", name).as_string(cursor.connection)
            figures[key] = _median_ms(lambda q=query: cursor.execute(q))
    print(json.dumps(figures))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
