"""The Prometheus endpoint (``path("pgmq/metrics", ...)``): figures, format and access."""

from __future__ import annotations

import pytest
from django.db import connection
from django.test import Client
from prometheus_client.openmetrics.parser import (
    text_string_to_metric_families as parse_openmetrics,
)
from prometheus_client.parser import text_string_to_metric_families as parse_text

from django_pgmq.dashboard.prometheus import ESTIMATED_LABELS

from . import test_admin_views
from .test_admin_views import login

manager = test_admin_views.manager  # the same rolled-back-transaction fixture
URL = "/pgmq/metrics"
OPENMETRICS = "application/openmetrics-text; version=1.0.0; charset=utf-8"


def samples(body: str, parse=parse_text) -> dict[str, float]:
    """Every sample, keyed by name and sorted labels, as prometheus_client's parser reads it."""
    found = {}
    for family in parse(body):
        for sample in family.samples:
            labels = ",".join(f'{k}="{v}"' for k, v in sorted(sample.labels.items()))
            found[f"{sample.name}{{{labels}}}"] = sample.value
    return found


def families(body: str, parse=parse_text) -> dict[str, str]:
    """Each metric family's type, by family name."""
    return {family.name: family.type for family in parse(body)}


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


def test_openmetrics_parser_accepts_it_with_counters_and_gauges(client, db, queue, manager):
    login(client, "view_queue")
    manager.send_batch(queue, [{"n": i} for i in range(2)])
    manager.create_queue(queue + "_dlq")
    manager.send(queue + "_dlq", {"dead": True})
    response = client.get(URL, headers={"Accept": OPENMETRICS})
    assert response["Content-Type"].startswith("application/openmetrics-text")
    body = response.content.decode()
    types = families(body, parse_openmetrics)
    assert types["pgmq_messages"] == "counter"
    assert types["pgmq_queue_length"] == "gauge"
    assert types["pgmq_workers_live"] == "gauge"
    found = samples(body, parse_openmetrics)
    labels = f'{{database="default",queue="{queue}"}}'
    assert found["pgmq_messages_total" + labels] == 2
    assert found["pgmq_dead_letter_length" + labels] == 1
    manager.drop_queue(queue + "_dlq")


def test_a_live_worker_counts_for_its_queues(client, db, queue, manager):
    from django_pgmq.worker.presence import Presence

    login(client, "view_queue")
    presence = Presence("default", [queue], 1, interval=30)
    presence.register()
    found = samples(client.get(URL).content.decode())
    assert found[f'pgmq_queue_workers{{database="default",queue="{queue}"}}'] == 1
    assert found['pgmq_workers_live{database="default"}'] >= 1
    presence.unregister()


def test_estimated_figures_are_named(client, db, queue, manager, settings):
    settings.PGMQ = {**settings.PGMQ, "DASHBOARD_EXACT_LIMIT": 10}
    login(client, "view_queue")
    manager.send_batch(queue, [{"n": i} for i in range(100)])
    with connection.cursor() as cursor:
        cursor.execute(f'ANALYZE pgmq."q_{queue}"')
    found = samples(client.get(URL).content.decode())
    key = f'pgmq_figure_estimated{{database="default",figure="depth",queue="{queue}"}}'
    assert found[key] == 1
    # The label keeps the value alerts match (poison), not the figure's name (poison_length).
    key = f'pgmq_figure_estimated{{database="default",figure="poison",queue="{queue}"}}'
    assert found[key] == 1
    renamed = [f'figure="{name}"' for name in ESTIMATED_LABELS]  # a new figure keeps its name
    assert not any(r in k for r in renamed for k in found if k.startswith("pgmq_figure"))


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


@pytest.fixture
def other_unreachable():
    """The "other" alias pointed at a port nothing listens on, restored afterwards."""
    from django.db import connections

    wrapper = connections["other"]
    saved = dict(wrapper.settings_dict)
    wrapper.close()
    wrapper.settings_dict.update(HOST="127.0.0.1", PORT="1")
    yield
    wrapper.close()
    wrapper.settings_dict.clear()
    wrapper.settings_dict.update(saved)


@pytest.mark.django_db(databases=["default", "other"])
def test_an_unreachable_database_is_a_one_line_503(client, other_unreachable):
    login(client, "view_queue")
    response = client.get(URL, {"db": "other"})
    assert response.status_code == 503
    body = response.content.decode()
    assert body.startswith("database unavailable: ") and body.count("\n") == 1
