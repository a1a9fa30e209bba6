"""Side tables under the grant model: an application role writes only queue tables.

Real roles (LOGIN, not superuser) on the test database, granted by pgmq.grant_app_role:
of pgmq's tables, SELECT on all and INSERT/UPDATE/DELETE/TRUNCATE on the queue tables
(q_*, a_*) only, and no CREATE on schema pgmq.
Every message operation still works (its side writes go through the owner's helpers),
and every change of policy takes the manage_queues right (42501 otherwise).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import make_conninfo

pytestmark = pytest.mark.django_db(transaction=True)


class Role:
    def __init__(self, name: str, dsn: str) -> None:
        self.name = name
        self.dsn = dsn

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(self.dsn, autocommit=True)


@pytest.fixture
def make_role(pg_connect, pg_dsn) -> Iterator[Callable[..., Role]]:
    admin = pg_connect()
    made: list[str] = []

    def make(manage_queues: bool = False, create_queues: bool = False) -> Role:
        name, password = f"pgmq_side_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
        admin.execute(
            sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER PASSWORD {}").format(
                sql.Identifier(name), sql.Literal(password)
            )
        )
        made.append(name)
        admin.execute(
            "SELECT pgmq.grant_app_role(%s, %s, '{}', %s)", [name, create_queues, manage_queues]
        )
        return Role(name, make_conninfo(pg_dsn, user=name, password=password))

    yield make
    for name in made:
        admin.execute("SELECT pgmq.revoke_app_role(%s)", [name])
        admin.execute(sql.SQL("DROP OWNED BY {} CASCADE").format(sql.Identifier(name)))
        admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))


@pytest.fixture
def app(make_role) -> Role:
    return make_role()


@pytest.fixture
def manager_role(make_role) -> Role:
    return make_role(manage_queues=True)


@pytest.fixture
def queues(pg_connect) -> Iterator[Callable[[], str]]:
    """Queues made by the owner (the test database's superuser), dropped afterwards."""
    owner = pg_connect()
    made: list[str] = []

    def make() -> str:
        name = f"side_{uuid.uuid4().hex[:10]}"
        owner.execute("SELECT pgmq.create(%s::text)", [name])
        made.append(name)
        return name

    yield make
    for name in made:
        owner.execute("SELECT pgmq.drop_queue(%s::text)", [name])


def refused(conn: psycopg.Connection, query: str, params: list | None = None) -> psycopg.Error:
    with pytest.raises(psycopg.Error) as caught:
        conn.execute(query, params or [])
    assert caught.value.sqlstate == "42501", caught.value
    return caught.value


def test_the_role_has_no_write_right_on_side_tables(app):
    with app.connect() as conn:
        for statement in (
            "INSERT INTO pgmq.celery_queue (queue_name, celery_name) VALUES ('x', 'x')",
            "UPDATE pgmq.queue_attributes SET attributes = '{}'",
            "DELETE FROM pgmq.schedules",
            "TRUNCATE pgmq.topic_bindings",
            "UPDATE pgmq.notify_insert_throttle SET throttle_interval_ms = 0",
            "DELETE FROM pgmq.queue_deduplication",
            "CREATE TABLE pgmq.planted (x int)",
        ):
            refused(conn, statement)


def test_deduplicated_sends(pg_connect, app, queues):
    q = queues()
    pg_connect().execute(
        "SELECT pgmq.set_queue_attributes(%s::text, '{\"deduplication_window\": 60}'::jsonb)", [q]
    )
    with app.connect() as conn:
        send = "SELECT * FROM pgmq.send(%s::text, '{}'::jsonb, %s::jsonb)"
        [first] = conn.execute(send, [q, '{"deduplication_id": "a"}']).fetchone()
        [again] = conn.execute(send, [q, '{"deduplication_id": "a"}']).fetchone()
        assert again == first
        # a batch repeating an id runs the ON CONFLICT statement (pgmq._dedup_claim)
        ids = conn.execute(
            "SELECT * FROM pgmq.send_batch(%s::text, ARRAY['{}', '{}', '{}']::jsonb[], "
            'ARRAY[\'{"deduplication_id": "b"}\', \'{"deduplication_id": "b"}\', '
            '\'{"deduplication_id": "a"}\']::jsonb[])',
            [q],
        ).fetchall()
        assert ids[0] == ids[1] and ids[2] == (first,)
        assert conn.execute(f'SELECT count(*) FROM pgmq."q_{q}"').fetchone() == (2,)
        # retention forgets ids past the window through the owner's helper
        conn.execute("SELECT * FROM pgmq._retention_batch(%s::text, 100)", [q])
        # the helpers refuse a queue without a window
        plain = queues()
        with pytest.raises(psycopg.Error, match="has no deduplication window"):
            conn.execute(
                "SELECT pgmq._dedup_record(%s::text, '{x}'::text[], '{1}'::bigint[])", [plain]
            )


def test_a_notify_enabled_send(pg_connect, app, queues):
    q = queues()
    owner = pg_connect()
    owner.execute("SELECT pgmq.enable_notify_insert(%s::text, 1000)", [q])
    listener = pg_connect()
    listener.execute(sql.SQL("LISTEN {}").format(sql.Identifier(f"pgmq.q_{q}.INSERT")))
    with app.connect() as conn:
        conn.execute("SELECT * FROM pgmq.send(%s::text, '{}'::jsonb)", [q])
        got = list(listener.notifies(timeout=5, stop_after=1))
        assert [n.channel for n in got] == [f"pgmq.q_{q}.INSERT"]
        assert conn.execute("SELECT pgmq._rearm_notify(%s::text)", [q]).fetchone() == (1,)
    assert owner.execute(
        "SELECT last_notified_at = to_timestamp(0) FROM pgmq.notify_insert_throttle "
        "WHERE queue_name = %s",
        [q],
    ).fetchone() == (True,)


def test_a_schedule_tick_as_the_app_and_its_policy_as_a_manager(app, manager_role, queues):
    q = queues()
    name = f"side_{uuid.uuid4().hex[:8]}"
    create = "SELECT pgmq.create_schedule(%s::text, '@every 10 seconds'::text, %s::text)"
    with app.connect() as conn:
        err = refused(conn, create, [name, q])
        assert "manage_queues" in str(err)
    with manager_role.connect() as mgr:
        mgr.execute(create, [name, q])
        mgr.execute("SELECT pgmq.enable_schedule(%s::text, false)", [name])
        mgr.execute("SELECT pgmq.enable_schedule(%s::text, true)", [name])
    try:
        with app.connect() as conn:
            # the same schedule again, as a worker's start applies the settings: no change
            conn.execute(create, [name, q])
            conn.execute("SELECT pgmq.enable_schedule(%s::text, true)", [name])
            assert (
                conn.execute(
                    "SELECT * FROM pgmq.set_schedule_origin(ARRAY[%s]::text[], NULL::text)", [name]
                ).fetchall()
                == []
            )
            refused(
                conn,
                "SELECT * FROM pgmq.set_schedule_origin(ARRAY[%s]::text[], 'settings'::text)",
                [name],
            )
            refused(
                conn,
                "SELECT pgmq.create_schedule(%s::text, '@every 20 seconds'::text, %s::text)",
                [name, q],
            )
            refused(conn, "SELECT pgmq.enable_schedule(%s::text, false)", [name])
            refused(conn, "SELECT pgmq.drop_schedule(%s::text)", [name])
            # far ahead would skip every schedule's ticks: policy
            refused(conn, "SELECT * FROM pgmq.enqueue_due_schedules(now() + interval '1 day')")
            sent = conn.execute(
                "SELECT schedule_name, msg_id FROM pgmq.enqueue_due_schedules("
                "now() + interval '30 seconds') WHERE schedule_name = %s",
                [name],
            ).fetchall()
            assert len(sent) == 1 and sent[0][1] is not None
            assert conn.execute(
                "SELECT msg_id FROM pgmq.schedule_ticks WHERE schedule_name = %s", [name]
            ).fetchall() == [(sent[0][1],)]
    finally:
        with manager_role.connect() as mgr:
            assert mgr.execute("SELECT pgmq.drop_schedule(%s::text)", [name]).fetchone() == (True,)


def test_attributes_and_bindings_take_manage_queues(app, manager_role, queues):
    q = queues()
    with app.connect() as conn:
        err = refused(conn, "SELECT pgmq.set_queue_attributes(%s::text, '{\"paused\": true}')", [q])
        assert "manage_queues" in str(err) and "--manage-queues" in (err.diag.message_hint or "")
        refused(conn, "SELECT pgmq.bind_topic('orders.*'::text, %s::text)", [q])
        refused(conn, "SELECT pgmq.unbind_topic('orders.*'::text, %s::text)", [q])
        # a call that changes nothing (a worker's start) passes
        assert conn.execute(
            "SELECT pgmq.set_queue_attributes(%s::text, '{}'::jsonb)", [q]
        ).fetchone() == ({},)
    with manager_role.connect() as mgr:
        # max_in_flight writes pgmq.queue_limit_state through _sync_queue_limits, as the owner
        assert mgr.execute(
            'SELECT pgmq.set_queue_attributes(%s::text, \'{"max_in_flight": 2, "paused": true}\')',
            [q],
        ).fetchone() == ({"max_in_flight": 2, "paused": True},)
        # (null removes a key; the limits' claim state is helper limits' to open to readers)
        mgr.execute(
            "SELECT pgmq.set_queue_attributes(%s::text, "
            '\'{"paused": null, "max_in_flight": null}\')',
            [q],
        )
        mgr.execute("SELECT pgmq.bind_topic('orders.*'::text, %s::text)", [q])
    with app.connect() as conn:
        assert conn.execute(
            "SELECT pgmq.send_topic('orders.new'::text, '{}'::jsonb)"
        ).fetchone() == (1,)
        assert len(conn.execute("SELECT * FROM pgmq.read(%s::text, 30, 5)", [q]).fetchall()) == 1
    with manager_role.connect() as mgr:
        assert mgr.execute(
            "SELECT pgmq.unbind_topic('orders.*'::text, %s::text)", [q]
        ).fetchone() == (True,)


def test_celery_declare_publish_consume_cleanup(pg_connect, make_role):
    """Declaring a new queue creates it: the transport's role needs --create-queues (as
    for pgmq.create); declaring, publishing and consuming an existing one need nothing."""
    app = make_role(create_queues=True)
    q = f"side_celery_{uuid.uuid4().hex[:8]}"
    owner = pg_connect()
    try:
        with app.connect() as conn:
            conn.execute(
                "SELECT pgmq.celery_declare_queue(%s::text, %s::text, true, true, NULL, NULL)",
                [q, q],
            )
            conn.execute(
                "SELECT pgmq.celery_bind('ex'::text, 'direct'::text, 'rk'::text, %s::text)", [q]
            )
            conn.execute("SELECT pgmq.celery_enable_priorities(%s::text)", [q])
            assert conn.execute(
                "SELECT pgmq.celery_publish('ex'::text, 'rk'::text, '{\"t\": 1}'::jsonb)"
            ).fetchone() == (1,)
            [sid] = conn.execute("SELECT pgmq.celery_open_session()").fetchone()
            conn.execute("SELECT pgmq.celery_consume(%s::text, %s::integer)", [q, sid])
            # a session no connection of its role holds is not the caller's to add
            with pytest.raises(psycopg.Error, match="is not held by a connection of role"):
                conn.execute("SELECT pgmq.celery_consume(%s::text, %s::integer)", [q, sid + 1000])
            [msg] = conn.execute(
                "SELECT msg_id FROM pgmq.celery_read(%s::text, 30, 1)", [q]
            ).fetchone()
            assert conn.execute(
                "SELECT pgmq.celery_ack(%s::text, ARRAY[%s]::bigint[])", [q, msg]
            ).fetchone() == (1,)
            conn.execute("SELECT pgmq.celery_unbind('ex'::text, 'rk'::text, %s::text)", [q])
            conn.execute("SELECT pgmq.celery_delete_exchange('ex'::text)")
            assert conn.execute("SELECT pgmq.celery_cleanup()").fetchone() == (0,)
            # kombu's queue_delete of a queue the transport made (the owner's queue now)
            other = f"{q}_x"
            conn.execute("SELECT pgmq.celery_declare_queue(%s::text, %s::text)", [other, other])
            assert conn.execute(
                "SELECT pgmq.celery_delete_queue(%s::text)", [other]
            ).fetchone() == (True,)
            # the last consumer leaves its auto-delete queue, which Celery created: dropped
            assert conn.execute(
                "SELECT pgmq.celery_cancel(%s::text, %s::integer)", [q, sid]
            ).fetchone() == (True,)
        assert owner.execute(
            "SELECT count(*) FROM pgmq.meta WHERE queue_name = %s", [q]
        ).fetchone() == (0,)
    finally:
        owner.execute(
            "SELECT pgmq.drop_queue(%s::text) WHERE EXISTS "
            "(SELECT 1 FROM pgmq.meta WHERE queue_name = %s)",
            [q, q],
        )


def test_a_declared_row_never_makes_the_owner_drop_the_owners_queue(pg_connect, app, queues):
    """issue: a planted pgmq.celery_queue row made celery_cleanup drop the owner's queue."""
    victim = queues()
    owner = pg_connect()
    owner.execute("SELECT * FROM pgmq.send(%s::text, '{\"keep\": 1}'::jsonb)", [victim])
    with app.connect() as conn:
        # planting the row directly is refused
        refused(
            conn,
            "INSERT INTO pgmq.celery_queue (queue_name, celery_name, auto_delete, ever_consumed, "
            "expires, last_used_at) "
            "VALUES (%s, %s, true, true, '1 second', now() - interval '1 day')",
            [victim, victim],
        )
        # declaring the owner's queue as auto-delete with a tiny x-expires, consuming and
        # leaving it: the transport did not create it, so it stays
        conn.execute(
            "SELECT pgmq.celery_declare_queue(%s::text, %s::text, true, true, 1, NULL)",
            [victim, victim],
        )
        [sid] = conn.execute("SELECT pgmq.celery_open_session()").fetchone()
        conn.execute("SELECT pgmq.celery_consume(%s::text, %s::integer)", [victim, sid])
        assert conn.execute(
            "SELECT pgmq.celery_cancel(%s::text, %s::integer)", [victim, sid]
        ).fetchone() == (False,)
        # priorities on a queue it did not create are the queue's policy
        refused(conn, "SELECT pgmq.celery_enable_priorities(%s::text)", [victim])
        # and kombu's queue_delete leaves it to the caller's own rights
        assert conn.execute("SELECT pgmq.celery_delete_queue(%s::text)", [victim]).fetchone() == (
            None,
        )
    owner.execute("SELECT pg_sleep(0.01)")
    assert owner.execute("SELECT pgmq.celery_cleanup()").fetchone() == (0,)
    assert owner.execute(
        "SELECT created_by_celery FROM pgmq.celery_queue WHERE queue_name = %s", [victim]
    ).fetchone() == (False,)
    assert owner.execute(f'SELECT count(*) FROM pgmq."q_{victim}"').fetchone() == (1,)


def test_spark_source_and_staging_bookkeeping(pg_connect, app, manager_role, queues):
    q = queues()
    owner = pg_connect()
    owner.execute(
        "SELECT * FROM pgmq.send_batch(%s::text, ARRAY['{\"n\": 1}', '{\"n\": 2}']::jsonb[])", [q]
    )
    with app.connect() as conn:
        # the streaming source: claim, hold, acknowledge
        [batch] = conn.execute(
            "SELECT pgmq.spark_claim(%s::text, 'c1'::text, 30, 10, NULL::bigint, NULL::bigint)", [q]
        ).fetchone()
        assert batch == 1
        assert conn.execute(
            "SELECT pgmq.spark_hold(%s::text, 'c1'::text, 0::bigint, 1::bigint, 30)", [q]
        ).fetchone() == (2,)
        assert conn.execute(
            "SELECT pgmq.spark_ack(%s::text, 'c1'::text, 1::bigint, 'archive'::text)", [q]
        ).fetchone() == (1,)
        # a batch of messages it never claimed is refused
        with pytest.raises(psycopg.Error, match="not every message of the batch was claimed"):
            conn.execute(
                "SELECT pgmq._spark_batch_record(%s::text, 'c2'::text, NULL::bigint, "
                "'{1,2}'::bigint[], now())",
                [q],
            )

        # the writer: a staging table made by the owner for this role
        [stage] = conn.execute("SELECT pgmq.spark_stage_create(%s::text)", [q]).fetchone()
        assert owner.execute(
            "SELECT pg_get_userbyid(relowner) = current_user, relpersistence FROM pg_class "
            "WHERE oid = %s::regclass",
            [f"pgmq.{stage}"],
        ).fetchone() == (True, "u")
        with conn.cursor().copy(
            f"COPY pgmq.{stage} (part, attempt, vt, message, headers) FROM STDIN"
        ) as copy:
            copy.write_row((0, 7, None, '{"w": 1}', None))
            copy.write_row((0, 8, None, '{"w": 2}', None))
        assert conn.execute(
            "SELECT pgmq.spark_stage_commit(%s::text, '{7}'::bigint[])", [stage]
        ).fetchone() == (1,)
        assert conn.execute("SELECT to_regclass(%s)", [f"pgmq.{stage}"]).fetchone() == (None,)

        # a streaming writer: batch ids recorded, a replay skipped
        [sstage] = conn.execute(
            "SELECT pgmq.spark_stage_create(%s::text, 'w1'::text)", [q]
        ).fetchone()
        conn.execute(f"INSERT INTO pgmq.{sstage} (part, attempt, message) VALUES (0, 1, '{{}}')")
        assert conn.execute(
            "SELECT pgmq.spark_stage_commit(%s::text, '{1}'::bigint[], 5::bigint)", [sstage]
        ).fetchone() == (1,)
        assert conn.execute(
            "SELECT pgmq.spark_stage_commit(%s::text, '{1}'::bigint[], 5::bigint)", [sstage]
        ).fetchone() == (-1,)
        assert conn.execute("SELECT pgmq.spark_stage_abort(%s::text)", [sstage]).fetchone() == (
            True,
        )

        # abort of a batch write; stale stages: an hour or more for any role
        [aborted] = conn.execute("SELECT pgmq.spark_stage_create(%s::text)", [q]).fetchone()
        assert conn.execute("SELECT pgmq.spark_stage_abort(%s::text)", [aborted]).fetchone() == (
            True,
        )
        conn.execute("SELECT pgmq.spark_stage_drop_stale(interval '1 hour')")
        refused(conn, "SELECT pgmq.spark_stage_drop_stale(interval '1 second')")

    # the pipeline jobs' bookkeeping: an export run (its cutoff from the clock, never the
    # caller) and a minute of statistics
    with app.connect() as conn:
        run_id, cutoff_is_past = conn.execute(
            "SELECT run_id, cutoff < now() FROM pgmq._spark_export_run("
            "%s::text, '/tmp/export'::text, 3600::double precision)",
            [q],
        ).fetchone()
        assert cutoff_is_past
        conn.execute(
            "SELECT pgmq._spark_export_set_stage(%s::uuid, 'done'::text, 0::bigint, 0::bigint)",
            [run_id],
        )
        conn.execute(
            "SELECT pgmq._spark_stats_upsert(%s::text, date_trunc('minute', now()), 1::bigint, "
            "0.5::double precision, 0.9::double precision, 1::double precision, 0::bigint)",
            [q],
        )
        refused(conn, "UPDATE pgmq.spark_export_run SET cutoff = now() + interval '1 year'")
    owner.execute("DELETE FROM pgmq.spark_export_run WHERE queue_name = %s", [q])
    owner.execute("DELETE FROM pgmq.spark_stats WHERE queue_name = %s", [q])

    # another application role may neither write nor commit this role's stage
    with app.connect() as conn:
        [mine] = conn.execute("SELECT pgmq.spark_stage_create(%s::text)", [q]).fetchone()
    with manager_role.connect() as other:
        refused(other, f"INSERT INTO pgmq.{mine} (part, attempt, message) VALUES (0, 1, '{{}}')")
        # (the manager may: manage_queues clears another role's stage)
        assert other.execute("SELECT pgmq.spark_stage_abort(%s::text)", [mine]).fetchone() == (
            True,
        )
    assert owner.execute(f'SELECT count(*) FROM pgmq."q_{q}"').fetchone() == (2,)


def test_a_recorded_role_dropped_without_revoke_troubles_no_other(pg_connect, make_role, queues):
    """A DBA drops a granted role without pgmq_grant --revoke: its registry row stays, and
    every check that reads the registry still answers for the other roles."""
    owner = pg_connect()
    gone = f"pgmq_gone_{uuid.uuid4().hex[:8]}"
    owner.execute(sql.SQL("CREATE ROLE {} NOLOGIN").format(sql.Identifier(gone)))
    owner.execute("SELECT pgmq.grant_app_role(%s, true, '{}', true)", [gone])
    owner.execute(sql.SQL("DROP OWNED BY {}").format(sql.Identifier(gone)))
    owner.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(gone)))
    try:
        app = make_role()
        q = queues()
        with app.connect() as conn:
            conn.execute("SELECT pgmq.celery_declare_queue(%s::text, %s::text)", [q, q])
            assert conn.execute("SELECT count(*) FROM pgmq.send(%s, '{}')", [q]).fetchone() == (1,)
            refused(conn, "SELECT pgmq.set_queue_attributes(%s, '{\"paused\": true}')", [q])
    finally:
        owner.execute("DELETE FROM pgmq.app_role WHERE role_name = %s", [gone])
