"""How the manager's statements use Django's connection: the same rows, hooks and checks.

The manager runs its statements on one psycopg cursor per connection, without
Django's cursor wrapper when nothing hooks into it (see manager/plumbing.py). What a
Django cursor would give must not change: timestamps, execute wrappers, the
query log, a broken atomic block, a reconnected connection.
"""

from __future__ import annotations

from zoneinfo import ZoneInfo

import pytest
from django.db import DatabaseError, connection, connections, transaction
from django.db.transaction import TransactionManagementError
from django.test import override_settings
from django.test.utils import CaptureQueriesContext

TIMESTAMPS = "SELECT enqueued_at, last_read_at, vt FROM pgmq.{} WHERE msg_id = %s"


def django_timestamps(queue: str, msg_id: int) -> tuple:
    """A message's timestamps as a Django cursor reads them."""
    with connection.cursor() as cursor:
        cursor.execute(TIMESTAMPS.format(f"q_{queue.lower()}"), [msg_id])
        return cursor.fetchone()


def test_timestamps_are_the_ones_a_django_cursor_reads(manager, queue):
    msg_id = manager.send(queue, {"n": 1})
    [message] = manager.read(queue, vt=30, qty=1)
    ours = (message.enqueued_at, message.last_read_at, message.vt)
    assert ours == django_timestamps(queue, msg_id)
    assert [t.tzinfo for t in ours] == [t.tzinfo for t in django_timestamps(queue, msg_id)]
    assert all(t.utcoffset().total_seconds() == 0 for t in ours)


@pytest.fixture
def paris_connection():
    """The default connection with the database TIME_ZONE setting Europe/Paris."""
    wrapper = connections["default"]
    settings = wrapper.settings_dict
    wrapper.close()
    settings["TIME_ZONE"] = "Europe/Paris"
    for cached in ("timezone", "timezone_name"):
        wrapper.__dict__.pop(cached, None)
    try:
        yield wrapper
    finally:
        wrapper.close()
        settings["TIME_ZONE"] = None
        for cached in ("timezone", "timezone_name"):
            wrapper.__dict__.pop(cached, None)


def test_a_database_time_zone_other_than_utc_is_kept(manager, queue, paris_connection):
    msg_id = manager.send(queue, {"n": 1})
    [message] = manager.read(queue, vt=30, qty=1)
    assert message.vt.tzinfo == ZoneInfo("Europe/Paris")
    assert (message.enqueued_at, message.last_read_at, message.vt) == django_timestamps(
        queue, msg_id
    )


def test_execute_wrappers_see_the_managers_statements(manager, queue):
    seen = []

    def spy(execute, sql, params, many, context):
        seen.append(sql)
        return execute(sql, params, many, context)

    with connection.execute_wrapper(spy):
        manager.send(queue, {"n": 1})
        [message] = manager.read(queue, vt=30, qty=1)
    assert message.message == {"n": 1}
    assert [s.split("(")[0].split()[-1] for s in seen] == ["pgmq.send", "pgmq.read"]


def test_the_query_log_records_the_managers_statements(manager, queue):
    with CaptureQueriesContext(connection) as captured:
        manager.send(queue, {"n": 1})
    [query] = captured.captured_queries
    assert "pgmq.send" in query["sql"] and queue in query["sql"]


def test_a_broken_atomic_block_refuses_the_manager_too(manager, queue):
    with pytest.raises(TransactionManagementError), transaction.atomic():
        try:
            with transaction.atomic(savepoint=False), connection.cursor() as cursor:
                cursor.execute("SELECT 1 / 0")
        except DatabaseError:
            pass
        manager.send(queue, {"n": 1})
    assert manager.metrics(queue).queue_length == 0


def test_untranslated_errors_are_djangos_database_errors(manager, queue):
    with pytest.raises(DatabaseError) as caught:
        manager._fetch("set_local_lock_timeout", {"timeout": "not a duration"}, queue)
    assert type(caught.value).__module__ == "django.db.utils"


def test_the_manager_follows_a_reconnected_connection(manager, queue):
    manager.send(queue, {"n": 1})
    connection.close()
    manager.send(queue, {"n": 2})
    assert [m.message for m in manager.read(queue, vt=30, qty=5)] == [{"n": 1}, {"n": 2}]


@pytest.fixture
def naive_connection():
    """The default connection with USE_TZ = False: Django reads naive datetimes."""
    wrapper = connections["default"]
    wrapper.close()
    with override_settings(USE_TZ=False):
        for cached in ("timezone", "timezone_name"):
            wrapper.__dict__.pop(cached, None)
        try:
            yield wrapper
        finally:
            wrapper.close()
    for cached in ("timezone", "timezone_name"):
        wrapper.__dict__.pop(cached, None)


def test_without_use_tz_timestamps_are_naive_as_djangos(manager, queue, naive_connection):
    msg_id = manager.send(queue, {"n": 1})
    [message] = manager.read(queue, vt=30, qty=1)
    assert message.vt.tzinfo is None
    assert (message.enqueued_at, message.last_read_at, message.vt) == django_timestamps(
        queue, msg_id
    )


def test_statements_past_the_cursor_limit_still_run(manager, queue, monkeypatch):
    from django_pgmq import sqlrun

    monkeypatch.setattr(sqlrun, "MAX_CURSORS", 2)
    ids = manager.send_batch(queue, [{"n": 1}, {"n": 2}])
    for _ in range(3):  # send_batch, read, set_vt, archive: more statements than cursors
        [message] = manager.read(queue, vt=0, qty=1)
        assert manager.set_vt(queue, message.msg_id, 0).msg_id == ids[0]
    assert manager.archive(queue, ids) == ids
    kept = connections["default"]._pgmq_cursors[1]
    assert 1 <= len(kept) <= 2


def test_a_connection_the_server_dropped_raises_djangos_error_on_every_call(
    manager, queue, pg_connect
):
    """Each call on a dead connection raises Django's OperationalError, never psycopg's."""
    import psycopg

    manager.send(queue, {"n": 1})
    pid = connection.connection.info.backend_pid
    pg_connect().execute("SELECT pg_terminate_backend(%s)", [pid])
    for call in (lambda: manager.send(queue, {"n": 2}), lambda: manager.metrics(queue)):
        with pytest.raises(DatabaseError) as raised:
            call()
        assert not isinstance(raised.value, psycopg.Error)
    connection.close()
    assert [m.message for m in manager.read(queue, vt=30, qty=5)] == [{"n": 1}]
