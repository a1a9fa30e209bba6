"""The Prometheus endpoint (``path("pgmq/metrics", ...)``): figures, format and access."""

from __future__ import annotations

import re

import pytest
from django.db import connection
from django.test import Client

from django_pgmq.dashboard.prometheus import label_value

from . import test_admin_views
from .test_admin_views import login

manager = test_admin_views.manager  # the same rolled-back-transaction fixture
URL = "/pgmq/metrics"
SAMPLE = re.compile(r'^[a-z_]+\{(?:[a-z_]+="(?:[^"\\\n]|\\.)*",?)*\} -?\d+(?:\.\d+)?$')


def samples(body: str) -> dict[str, float]:
    """Every sample line, keyed by name and labels; every other line must be HELP or TYPE."""
    found = {}
    for line in body.splitlines():
        if line.startswith("# "):
            assert re.match(r"^# (HELP|TYPE) [a-z_]+ .+$", line), line
            continue
        assert SAMPLE.match(line), line
        key, value = line.rsplit(" ", 1)
        found[key] = float(value)
    return found


def test_staff_with_view_permission_reads_every_figure(client, db, queue, manager):
    login(client, "view_queue")
    ids = manager.send_batch(queue, [{"n": i} for i in range(3)])
    manager.archive(queue, ids[0])
    response = client.get(URL)
    assert response.status_code == 200
    assert response["Content-Type"].startswith("text/plain; version=0.0.4")
    found = samples(response.content.decode())
    labels = f'{{database="default",queue="{queue}"}}'
    assert found["pgmq_queue_length" + labels] == 2
    assert found["pgmq_queue_visible_length" + labels] == 2
    assert found["pgmq_archive_length" + labels] == 1
    assert found["pgmq_archived_last_hour" + labels] == 1
    assert found["pgmq_messages_total" + labels] == 3
    assert 'pgmq_workers_live{database="default"}' in found
    assert not any(k.startswith("pgmq_figure_estimated") and queue in k for k in found)


def test_estimated_figures_are_named(client, db, queue, manager, settings):
    settings.PGMQ = {**settings.PGMQ, "DASHBOARD_EXACT_LIMIT": 10}
    login(client, "view_queue")
    manager.send_batch(queue, [{"n": i} for i in range(100)])
    with connection.cursor() as cursor:
        cursor.execute(f'ANALYZE pgmq."q_{queue}"')
    found = samples(client.get(URL).content.decode())
    key = f'pgmq_figure_estimated{{database="default",queue="{queue}",figure="depth"}}'
    assert found[key] == 1


def test_without_credentials_401(db):
    response = Client().get(URL)
    assert response.status_code == 401
    assert response["WWW-Authenticate"].startswith("Bearer")


@pytest.mark.parametrize(("staff", "perms"), [(True, ()), (False, ("view_queue",))])
def test_without_staff_and_view_permission_403(client, db, staff, perms):
    login(client, *perms, staff=staff)
    assert client.get(URL).status_code == 403


def test_token_opens_it_without_a_session(db, queue, settings):
    settings.PGMQ = {**settings.PGMQ, "METRICS_TOKEN": "s3cret"}
    client = Client()
    assert client.get(URL, headers={"Authorization": "Bearer s3cret"}).status_code == 200
    assert client.get(URL, headers={"Authorization": "Bearer wrong"}).status_code == 401
    assert client.get(URL, headers={"Authorization": "s3cret"}).status_code == 401


def test_no_token_configured_means_no_token_accepted(db, settings):
    settings.PGMQ = {**settings.PGMQ, "METRICS_TOKEN": None}
    assert Client().get(URL, headers={"Authorization": "Bearer "}).status_code == 401


def test_only_get(client, db):
    login(client, "view_queue")
    assert client.post(URL).status_code == 405


@pytest.mark.parametrize(
    ("raw", "escaped"),
    [('a"b', 'a\\"b'), ("a\\b", "a\\\\b"), ("a\nb", "a\\nb"), ("plain", "plain")],
)
def test_label_values_are_escaped(raw, escaped):
    assert label_value(raw) == escaped
