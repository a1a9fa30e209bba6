"""Queue figures come from one SQL source (pgmq._queue_figures): pgmq.metrics(), the
admin's figures, the Prometheus export and pgmq_metrics agree for the same queues."""

from __future__ import annotations

import json
import uuid
import warnings
from io import StringIO

import pytest
from django.core.management import call_command
from django.db import connection, transaction
from django.test import Client
from psycopg import sql

from .test_admin_metrics import URL, samples


def exported(queue: str, settings) -> dict[str, float]:
    """The Prometheus endpoint's per-queue samples of ``queue``, by metric name."""
    settings.PGMQ = {**settings.PGMQ, "METRICS_TOKEN": "t0ken"}
    body = Client().get(URL, headers={"Authorization": "Bearer t0ken"}).content.decode()
    label = f'{{database="default",queue="{queue}"}}'
    return {k.removesuffix(label): v for k, v in samples(body).items() if k.endswith(label)}


@pytest.fixture
def queues(manager, queue, queue_name):
    """A plain queue and a partitioned one, each with visible, in-flight and delayed
    messages and an oldest message 90 s old, and an idle queue; dropped after."""
    part, idle = f"p_{uuid.uuid4().hex[:12]}", f"{queue_name}_idle"
    manager.create_partitioned_queue(part, 10, 30, 2)
    manager.create_queue(idle)
    try:
        for q in (queue, part):
            manager.send_batch(q, [{"n": n} for n in range(5)])
            manager.send(q, {"late": True}, delay=600)
            manager.read(q, vt=600, qty=2)
            with connection.cursor() as cursor:
                cursor.execute(
                    sql.SQL(
                        "UPDATE pgmq.{} SET enqueued_at = enqueued_at - interval '90 seconds'"
                    ).format(sql.Identifier(f"q_{q}"))
                )
        yield [queue, part, idle]
    finally:
        manager.drop_queue(part)
        manager.drop_queue(idle)


def close(a: int | None, b: int | None) -> bool:
    """Ages read by separate statements: equal, or a second apart."""
    return a is b is None or (a is not None and b is not None and abs(a - b) <= 1)


def test_metrics_the_admin_prometheus_and_the_command_agree(queues, internal, settings):
    plain, part, idle = queues
    admin = {s.queue_name: s for s in internal.dashboard_stats_of(queues, exact_limit=1000)}
    scrape = internal.prometheus_scrape(exact_limit=1000, default_max_receive_count=5)
    scraped = {q.stats.queue_name: q.stats for q in scrape.queues}
    out = StringIO()
    call_command("pgmq_metrics", *queues, "--json", stdout=out)
    command = {row["queue_name"]: row for row in json.loads(out.getvalue())}
    for name in queues:
        m, a, p, c = internal.metrics(name), admin[name], scraped[name], command[name]
        text = exported(name, settings)
        assert (m.queue_length, m.queue_visible_length, m.total_messages) == (
            a.queue_length,
            a.queue_visible_length,
            a.total_messages,
        )
        assert (
            a.queue_length,
            a.queue_visible_length,
            a.in_flight_length,
            a.delayed_length,
            a.total_messages,
        ) == (
            p.queue_length,
            p.queue_visible_length,
            p.in_flight_length,
            p.delayed_length,
            p.total_messages,
        )
        assert (c["queue_length"], c["queue_visible_length"], c["total_messages"]) == (
            m.queue_length,
            m.queue_visible_length,
            m.total_messages,
        )
        assert text["pgmq_queue_length"] == m.queue_length
        assert text["pgmq_queue_visible_length"] == m.queue_visible_length
        assert text["pgmq_messages_total"] == m.total_messages
        for age in (a.oldest_msg_age_sec, p.oldest_msg_age_sec, c["oldest_msg_age_sec"]):
            assert close(m.oldest_msg_age_sec, age)
        assert close(m.newest_msg_age_sec, a.newest_msg_age_sec)
        if m.oldest_msg_age_sec is not None:
            assert close(text["pgmq_queue_oldest_message_age_seconds"], m.oldest_msg_age_sec)
    for name in (plain, part):
        m, a = internal.metrics(name), admin[name]
        lengths = (m.queue_length, m.queue_visible_length)
        assert (*lengths, a.in_flight_length, a.delayed_length) == (6, 3, 2, 1)
        assert m.total_messages == 6 and 89 <= m.oldest_msg_age_sec <= 92
        assert a.estimated == frozenset()
    m, a = internal.metrics(idle), admin[idle]
    assert (m.queue_length, m.queue_visible_length, m.total_messages, m.oldest_msg_age_sec) == (
        0,
        0,
        0,
        None,
    )
    assert (a.queue_length, a.in_flight_length, a.delayed_length, a.archive_size) == (0, 0, 0, 0)


def test_metrics_instant_is_now_and_the_total_is_the_sequences(queues):
    """pgmq.metrics() and the figures by default are as of the transaction's now()
    (pgmq's instant); the total is the sequence's, read by SELECT (bounded) or by
    pg_sequence_last_value (metrics) alike."""
    with transaction.atomic(), connection.cursor() as cursor:
        cursor.execute("SELECT pg_sleep(0.2)")  # now() falls behind the wall clock
        cursor.execute(
            "SELECT f.scrape_time = now(), f.total_messages, m.scrape_time = now(),"
            " m.total_messages FROM pgmq._queue_figures(ARRAY[%(q)s], 1000) f,"
            " pgmq.metrics(%(q)s) m",
            {"q": queues[0]},
        )
        assert cursor.fetchone() == (True, 6, True, 6)


def test_the_old_name_of_the_prometheus_view_still_imports_with_a_warning():
    from django_pgmq.dashboard.prometheus import prometheus_metrics

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        from django_pgmq.urls import metrics
    assert metrics is prometheus_metrics
    assert [w.category for w in caught] == [DeprecationWarning]
    assert "prometheus_metrics" in str(caught[0].message)


def test_queue_figures_begin_with_pgmq_metrics_columns(queues):
    """pgmq._queue_figures has pgmq.metrics_result's columns first, by the same names."""
    with connection.cursor() as cursor:
        cursor.execute("SELECT * FROM pgmq.metrics(%s)", [queues[0]])
        pgmq_columns = [c.name for c in cursor.description]
        cursor.execute("SELECT * FROM pgmq._queue_figures(%s::text[])", [queues])
        columns = [c.name for c in cursor.description]
    assert len(pgmq_columns) == 8 and columns[:8] == pgmq_columns


def test_a_sequence_gone_reads_as_null_for_the_dashboard_to_leave_out(queues):
    """A queue dropped while the dashboard reads: its total is NULL (its row left out),
    not an error on a bare oid."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pgmq._queue_totals(ARRAY[0::oid,"
            " pg_get_serial_sequence(format('pgmq.%%I', 'q_' || %s), 'msg_id')::regclass::oid])",
            [queues[0]],
        )
        assert cursor.fetchone()[0] == [None, 6]
