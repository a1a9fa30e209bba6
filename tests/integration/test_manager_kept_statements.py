"""The manager's own statements: with psycopg's prepared statements on (OPTIONS
prepare_threshold), send, read, pop, archive and delete on a queue without attributes run
the queue's statement (pgmq._queue_ops_client_sql) prepared on Django's connection.

What each test checks is what the database did: which statements the connection holds,
what moved between the queue and its archive, and that pg_proc did not change. A queue
with attributes goes through the SQL API (test_claim_filter.py has the manager among its
readers, for every read-side attribute).
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import psycopg
import pytest
from django.db import connection, transaction

from django_pgmq import sqlrun
from django_pgmq.errors import QueueNotFound
from django_pgmq.manager import QueueManager


@pytest.fixture
def prepared(manager: QueueManager) -> Iterator[psycopg.Connection]:
    """Django's psycopg connection with prepared statements on, as a project turns them on."""
    connection.ensure_connection()
    pg = connection.connection
    pg.prepare_threshold = 5
    yield pg
    pg.prepare_threshold = None


def held(pg: psycopg.Connection, queue: str) -> list[tuple[str, int]]:
    """The statements the connection holds that touch ``queue``'s table, each with how many
    times it ran on a generic plan (psycopg's names start with _pg3_)."""
    rows = pg.execute(
        "SELECT name, generic_plans + custom_plans FROM pg_prepared_statements"
        " WHERE statement LIKE %s ORDER BY name",
        [f"%pgmq.q_{queue} %"],
    ).fetchall()
    return [(name, runs) for name, runs in rows]


def sql_api_calls(pg: psycopg.Connection, queue: str) -> dict[str, str]:
    """The SQL API's count of this session's calls per operation on ``queue`` (the
    settings pgmq.prep_<op>g_q_<queue> its router keeps): empty when it never ran one."""
    rows = pg.execute(
        "SELECT op, current_setting('pgmq.prep_' || op || 'g_q_' || %s, true)"
        " FROM unnest(array['r', 'p', 'a', 'd']) AS op",
        [queue],
    ).fetchall()
    return {op: value for op, value in rows if value}


def functions(pg: psycopg.Connection) -> list[tuple]:
    return pg.execute(
        "SELECT p.oid::regprocedure::text, md5(p.prosrc) FROM pg_proc p"
        " WHERE p.pronamespace = 'pgmq'::regnamespace ORDER BY 1"
    ).fetchall()


def archived(pg: psycopg.Connection, queue: str) -> list[int]:
    return [r[0] for r in pg.execute(f"SELECT msg_id FROM pgmq.a_{queue} ORDER BY 1")]


def test_read_pop_archive_and_delete_run_the_queue_statement_prepared(manager, queue, prepared):
    before = functions(prepared)
    ids = manager.send_batch(queue, [{"n": n} for n in range(6)])
    got = manager.read(queue, vt=30, qty=3)
    assert [m.msg_id for m in got] == ids[:3]
    assert [m.message for m in got] == [{"n": 0}, {"n": 1}, {"n": 2}]
    assert all(m.read_ct == 1 and m.vt > m.enqueued_at for m in got)
    assert manager.archive(queue, [m.msg_id for m in got]) == ids[:3]
    assert manager.archive(queue, ids[3]) is True
    assert [m.msg_id for m in manager.pop(queue, 1)] == [ids[4]]
    assert manager.delete(queue, [ids[5], 10**12]) == [ids[5]]
    # five statements of this queue's: send, read, archive (run twice: a list and one id
    # share it), pop, delete; none of the SQL API's kept statements (pgmq_*)
    statements = held(prepared, queue)
    assert [name[:5] for name, _ in statements] == ["_pg3_"] * 5
    assert sorted(runs for _, runs in statements) == [1, 1, 1, 1, 2]
    assert sql_api_calls(prepared, queue) == {}
    assert archived(prepared, queue) == ids[:4]
    assert manager.metrics(queue).queue_length == 0
    assert functions(prepared) == before


def test_a_repeated_read_runs_on_a_generic_plan(manager, queue, prepared):
    manager.send_batch(queue, [{"n": n} for n in range(40)])
    for _ in range(8):
        assert len(manager.read(queue, vt=30, qty=2)) == 2
    generic = prepared.execute(
        "SELECT generic_plans FROM pg_prepared_statements WHERE statement LIKE %s",
        [f"%UPDATE pgmq.q_{queue} m%"],
    ).fetchone()
    assert generic is not None and generic[0] >= 1


def test_without_prepared_statements_nothing_is_prepared(manager, queue):
    """Django's default (prepare_threshold None): the SQL API's functions, as always."""
    connection.ensure_connection()
    ids = manager.send_batch(queue, [{"n": 1}, {"n": 2}])
    assert [m.msg_id for m in manager.read(queue, vt=30, qty=2)] == ids
    assert manager.archive(queue, ids) == ids
    assert [
        name for name, _ in held(connection.connection, queue) if name.startswith("_pg3_")
    ] == []


def test_a_paused_queue_hands_out_nothing_and_its_messages_stay(manager, queue, prepared):
    ids = manager.send_batch(queue, [{"n": 1}, {"n": 2}])
    assert [m.msg_id for m in manager.read(queue, vt=0, qty=1)] == ids[:1]  # prepared now
    manager.set_queue_attributes(queue, paused=True)
    assert manager.read(queue, vt=30, qty=2) == []
    assert manager.pop(queue, 2) == []
    assert manager.metrics(queue).queue_length == 2
    manager.set_queue_attributes(queue, paused=None)
    assert [m.msg_id for m in manager.read(queue, vt=30, qty=2)] == ids


def test_an_empty_result_on_a_queue_with_attributes_goes_to_the_sql_api(manager, queue, prepared):
    """Priorities: the queue's statement stops at its guard (it would claim by msg_id), and
    the SQL API's read claims by priority; its send, archive and pop too."""
    manager.set_queue_attributes(queue, priorities=True)
    low, high = manager.send_batch(
        queue, [{"n": 1}, {"n": 2}], headers=[{"priority": 0}, {"priority": 9}]
    )
    assert [m.msg_id for m in manager.read(queue, vt=30, qty=1)] == [high]
    assert manager.archive(queue, high) is True
    assert archived(prepared, queue) == [high]
    assert [m.msg_id for m in manager.pop(queue, 1)] == [low]


def test_an_empty_result_on_a_plain_queue_stands(manager, queue, prepared):
    """Nothing visible, or no such id: the queue has no attributes, so the SQL API's
    function is not run after the statement."""
    assert manager.read(queue, vt=30, qty=5) == []
    assert manager.pop(queue, 5) == []
    assert manager.archive(queue, [10**12]) == []
    assert manager.delete(queue, 10**12) is False
    assert sql_api_calls(prepared, queue) == {}
    assert len(held(prepared, queue)) == 4


def test_sends_keep_order_headers_and_attributes(manager, queue, prepared):
    ids = manager.send_batch(
        queue, [{"n": n} for n in range(3)], headers=[{"h": 1}, None, {"h": 3}]
    )
    one = manager.send(queue, {"n": 3}, headers={"h": 4})
    assert ids == sorted(ids) and one > ids[-1]
    got = manager.read(queue, vt=30, qty=10)
    assert [(m.message, m.headers) for m in got] == [
        ({"n": 0}, {"h": 1}),
        ({"n": 1}, None),
        ({"n": 2}, {"h": 3}),
        ({"n": 3}, {"h": 4}),
    ]
    assert all(m.enqueued_at <= m.last_read_at for m in got)
    # a delay goes through the SQL API (the statement sends visible messages only)
    late = manager.send(queue, {"n": 4}, delay=60)
    assert manager.read(queue, vt=30, qty=10) == []
    assert manager.metrics(queue).queue_length == 5 and late > one
    # a deduplication window: the statement stops at its guard, the SQL API deduplicates
    manager.set_queue_attributes(queue, deduplication_window=60)
    first = manager.send(queue, {"n": 5}, deduplication_id="x")
    again = manager.send_batch(queue, [{"n": 6}], headers=[{"deduplication_id": "x"}])
    assert again in ([], [first])
    assert manager.metrics(queue).queue_length == 6


def test_a_dropped_and_recreated_queue_is_read_again(manager, queue, prepared):
    manager.send(queue, {"n": 1})
    assert len(manager.read(queue, vt=30, qty=1)) == 1
    manager.drop_queue(queue)
    with pytest.raises(QueueNotFound):
        manager.read(queue, vt=30, qty=1)
    manager.create_queue(queue)
    msg_id = manager.send(queue, {"n": 2})
    assert [m.message for m in manager.read(queue, vt=30, qty=1)] == [{"n": 2}]
    assert manager.archive(queue, msg_id) is True


def test_a_missing_queue_raises_queue_not_found(manager, prepared, queue_name):
    with pytest.raises(QueueNotFound):
        manager.read(queue_name, vt=30, qty=1)
    with pytest.raises(QueueNotFound):
        manager.archive(queue_name, [1])


def test_a_rolled_back_block_leaves_the_statements_working(manager, queue, prepared):
    """psycopg deallocates its statements after a rollback; the next call prepares again."""
    ids = manager.send_batch(queue, [{"n": n} for n in range(3)])
    assert [m.msg_id for m in manager.read(queue, vt=0, qty=1)] == ids[:1]
    with pytest.raises(ZeroDivisionError), transaction.atomic():
        assert [m.msg_id for m in manager.read(queue, vt=30, qty=1)] == ids[:1]
        1 / 0  # noqa: B018
    got = manager.read(queue, vt=30, qty=3)
    assert [m.msg_id for m in got] == ids
    assert [m.read_ct for m in got] == [2, 1, 1]  # the rolled-back read left no trace
    assert manager.archive(queue, ids) == ids


def test_a_read_inside_a_block_rolls_back_with_it(manager, queue, prepared):
    ids = manager.send_batch(queue, [{"n": 1}])
    with pytest.raises(ZeroDivisionError), transaction.atomic():
        assert manager.archive(queue, ids) == ids
        1 / 0  # noqa: B018
    assert archived(prepared, queue) == []
    assert [m.msg_id for m in manager.read(queue, vt=30, qty=1)] == ids


def test_a_plan_made_on_an_empty_queue_is_made_again_within_a_period(
    manager, queue, prepared, monkeypatch
):
    """PostgreSQL keeps a generic plan until the table's statistics change: one made while
    the queue was empty after a vacuum sorts a sequential scan. The statement is closed
    and prepared again (same text) every plan period, so the plan in use is made again on
    what the table holds, and the connection holds one statement of it."""
    monkeypatch.setattr(sqlrun, "PLAN_SECONDS", 0.2)
    prepared.execute(f"VACUUM ANALYZE pgmq.q_{queue}")
    for _ in range(8):  # custom plans, then the generic plan of an empty table
        assert manager.read(queue, vt=30, qty=10) == []
    for _ in range(4):
        manager.send_batch(queue, [{"n": n} for n in range(5000)])
    time.sleep(0.3)
    for _ in range(8):
        assert len(manager.read(queue, vt=30, qty=10)) == 10
    name = prepared.execute(
        "SELECT name FROM pg_prepared_statements WHERE statement LIKE %s"
        " ORDER BY prepare_time DESC LIMIT 1",
        [f"%UPDATE pgmq.q_{queue} m%"],
    ).fetchone()[0]
    plan = "\n".join(r[0] for r in prepared.execute(f"EXPLAIN EXECUTE {name}(30)"))
    assert len([n for n, _ in held(prepared, queue) if n.startswith("_pg3_")]) <= 3
    assert f"Index Scan using q_{queue}_pkey on q_{queue} q" in plan, plan
    assert f"Seq Scan on q_{queue}" not in plan, plan


# -- bounded: one prepared statement per kept statement, texts fetched once ------------


def plan_memory(pg: psycopg.Connection) -> int:
    """Bytes the session's cached plans hold (PostgreSQL's plan cache memory contexts)."""
    return pg.execute(
        "SELECT coalesce(sum(total_bytes), 0)::bigint FROM pg_backend_memory_contexts"
        " WHERE name IN ('CachedPlan', 'CachedPlanSource', 'CachedPlanQuery')"
    ).fetchone()[0]


def read_and_archive_rounds(send, read, archive, rounds: int) -> None:
    for _ in range(rounds):
        ids = send()
        assert read() == ids
        assert archive(ids) == ids
        time.sleep(0.01)


def test_plan_memory_stays_within_twice_the_sql_apis_over_many_periods(
    manager, queue, prepared, pg_connect, monkeypatch
):
    """Made again every period, a statement is closed first: the connection holds one
    prepared statement per kept statement, never the periods' old ones."""
    monkeypatch.setattr(sqlrun, "PLAN_SECONDS", 0.05)
    batch = [{"n": n} for n in range(10)]
    read_and_archive_rounds(
        lambda: manager.send_batch(queue, batch),
        lambda: [m.msg_id for m in manager.read(queue, vt=30, qty=10)],
        lambda ids: manager.archive(queue, ids),
        60,
    )
    ours = held(prepared, queue)
    assert len(ours) <= 3, ours  # send, read, archive
    manager_bytes = plan_memory(prepared)

    api = pg_connect()
    read_and_archive_rounds(
        lambda: [
            r[0]
            for r in api.execute(
                "SELECT * FROM pgmq.send_batch(%s, %s::jsonb[])",
                [queue, [psycopg.types.json.Jsonb(m) for m in batch]],
            )
        ],
        lambda: [r[0] for r in api.execute("SELECT msg_id FROM pgmq.read(%s, 30, 10)", [queue])],
        lambda ids: [
            r[0] for r in api.execute("SELECT pgmq.archive(%s, %s::bigint[])", [queue, ids])
        ],
        60,
    )
    api_bytes = plan_memory(api)
    print(f"plan memory: manager {manager_bytes} bytes, SQL API {api_bytes} bytes")
    assert manager_bytes <= 2 * api_bytes, (manager_bytes, api_bytes)


def test_unprepare_closes_psycopgs_statement_with_the_psycopg_installed(prepared):
    """`sqlrun._unprepare` uses psycopg's cache of prepared statements (no public call
    closes one statement): this fails if an upgrade of psycopg changed it."""
    text = "SELECT 1 AS kept_unprepare_probe"
    with psycopg.RawCursor(prepared) as cursor:
        cursor.execute(text, prepare=True)
        names = lambda: [  # noqa: E731
            r[0]
            for r in prepared.execute(
                "SELECT name FROM pg_prepared_statements WHERE statement = %s", [text]
            )
        ]
        [first] = names()
        assert sqlrun._unprepare(prepared, text) is True
        cursor.execute(text, prepare=True)  # prepared again, the old one closed after it
        prepared.execute("SELECT 1")
        assert len(names()) == 1 and names() != [first]


def test_many_queues_fetch_each_text_once_and_prepare_a_bounded_number(
    manager, prepared, queue_name, monkeypatch
):
    """120 queues read in turns at two sizes: each text is fetched once, at most MAX_KEPT
    statements are prepared, and the reads past them run unprepared (no churn)."""
    fetched: list[tuple] = []
    remember = sqlrun._KeptStatements.remember

    def counting(self, key, text):
        fetched.append(key)
        return remember(self, key, text)

    monkeypatch.setattr(sqlrun._KeptStatements, "remember", counting)
    monkeypatch.setattr(sqlrun, "PLAN_SECONDS", 3600.0)  # one period: no place frees up
    queues = [f"{queue_name}_{i}" for i in range(120)]
    for q in queues:
        manager.create_queue(q)
    try:
        for _ in range(5):
            for q in queues:
                for qty in (1, 10):
                    assert manager.read(q, vt=30, qty=qty) == []
        assert len(fetched) == len(set(fetched)) == 240
        ours = prepared.execute(
            "SELECT count(*) FROM pg_prepared_statements"
            " WHERE name LIKE '\\_pg3\\_%%' AND statement LIKE '%%pgmq._low_water_mark_for%%'"
        ).fetchone()[0]
        assert ours == sqlrun.MAX_KEPT
    finally:
        for q in queues:
            manager.drop_queue(q)
