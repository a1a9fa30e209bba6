"""Send one Celery canvas to a queue and print its result as JSON (a client process).

``python -m tests.celery_canvas_client SHAPE QUEUE``, with DJANGO_SETTINGS_MODULE
``tests.celery_results_settings``: the canvas test runs it beside a real worker, so that
the client, like the worker, reads results from django-celery-results' tables.
"""

from __future__ import annotations

import json
import sys

import django

django.setup()

from celery import chain, chord, group  # noqa: E402

from example_project.celery import app  # noqa: E402
from example_project.demo.tasks import add, listed, total  # noqa: E402


def shape(name: str, queue: str):
    """The canvas ``name``, every signature routed to ``queue`` (the worker sends the
    chain's next steps and the chord's callback with their own options)."""

    def s(task, *args):
        return task.s(*args).set(queue=queue)

    shapes = {
        # 1 + 2 = 3, + 10 = 13, + 100 = 113
        "chain": lambda: chain(s(add, 1, 2), s(add, 10), s(add, 100)),
        "group": lambda: group(s(add, n, n) for n in range(10)),
        # ten parents, their results in the header's order
        "chord": lambda: chord([s(add, n, 1) for n in range(10)], s(listed)),
        # a chord inside a chain: (0+1 + ... + 4+1) = 15, then + 5
        "chain_of_chord": lambda: chain(
            chord([s(add, n, 1) for n in range(5)], s(total)), s(add, 5)
        ),
    }
    return shapes[name]()


def main(name: str, queue: str) -> None:
    result = shape(name, queue).apply_async()
    print(json.dumps({"result": result.get(timeout=90)}), flush=True)
    app.pool.force_close_all()


if __name__ == "__main__":
    main(*sys.argv[1:3])
