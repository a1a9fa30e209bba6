"""Celery canvas (chain, group, chord) on the pgmq broker, with django-celery-results.

A real ``celery worker`` and a client process, both with ``tests.celery_results_settings``
(``CELERY_RESULT_BACKEND = "django-db"``): the chord's fan-in is django-celery-results'
own counter (``ChordCounter``), decremented by the worker as each header task stores its
result; no ``chord_unlock`` task polls. See docs/guide/workflows.md.
"""

from __future__ import annotations

import json
import subprocess
import sys
import uuid
from collections.abc import Iterator

import pytest
from django.db import connection

from tests.celery_support import ROOT, Worker

pytestmark = [pytest.mark.slow, pytest.mark.django_db(transaction=True)]

SETTINGS = "tests.celery_results_settings"


@pytest.fixture(scope="module")
def results_env(django_db_setup, django_db_blocker, test_database_url) -> dict[str, str]:
    """The worker's and client's environment; django-celery-results' tables migrated."""
    import os

    env = dict(os.environ)
    env.update(
        DATABASE_URL=test_database_url,
        DJANGO_SETTINGS_MODULE=SETTINGS,
        PYTHONUNBUFFERED="1",
        CELERY_VISIBILITY_TIMEOUT="30",
    )
    migrate = [sys.executable, "manage.py", "migrate", "django_celery_results", "-v", "0"]
    done = subprocess.run(migrate, env=env, cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    return env


@pytest.fixture(scope="module", params=["prefork", "threads"])
def worker(request, results_env) -> Iterator[tuple[Worker, str]]:
    queue = f"canvas_{request.param}_{uuid.uuid4().hex[:8]}"
    started = Worker(results_env, request.param, queue)
    yield started, queue
    started.kill()


def run_canvas(results_env: dict[str, str], worker: Worker, shape: str, queue: str) -> object:
    """Run the client process for ``shape``; the canvas's result."""
    command = [sys.executable, "-m", "tests.celery_canvas_client", shape, queue]
    done = subprocess.run(
        command, env=results_env, cwd=ROOT, capture_output=True, text=True, timeout=150
    )
    assert done.returncode == 0, done.stdout + done.stderr + worker.output
    return json.loads(done.stdout.strip().splitlines()[-1])["result"]


def test_chain_passes_each_result_to_the_next(results_env, worker):
    assert run_canvas(results_env, worker[0], "chain", worker[1]) == 113


def test_group_returns_every_result_in_order(results_env, worker):
    assert run_canvas(results_env, worker[0], "group", worker[1]) == [2 * n for n in range(10)]


def test_chord_callback_gets_its_parents_results_in_order_once(results_env, worker):
    assert run_canvas(results_env, worker[0], "chord", worker[1]) == [n + 1 for n in range(10)]
    with connection.cursor() as cursor:
        # the chord's counter row is gone once its callback was sent: no chord_unlock task
        cursor.execute("SELECT count(*) FROM django_celery_results_chordcounter")
        assert cursor.fetchone()[0] == 0
        cursor.execute(
            "SELECT count(*) FROM django_celery_results_taskresult WHERE task_name = %s",
            ["example_project.demo.tasks.listed"],
        )
        assert cursor.fetchone()[0] >= 1
        cursor.execute(
            "SELECT count(*) FROM django_celery_results_taskresult WHERE task_name LIKE %s",
            ["%chord_unlock"],
        )
        assert cursor.fetchone()[0] == 0


def test_a_chord_inside_a_chain(results_env, worker):
    assert run_canvas(results_env, worker[0], "chain_of_chord", worker[1]) == 20
