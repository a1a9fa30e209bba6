"""A claim of a max_in_flight queue reads O(its batch) slot rows, whatever the table's
statistics: its statements' plans are generic (made once per session, with the values
unknown), and without statistics on pgmq.queue_limit_slots (autovacuum off, or a claim
before the table's first analyze) a plan by the index of t (every slot row has the same
t) walked and sorted every slot of the queue at each claim (sql/26_limits.sql, migration
0052).
"""

from __future__ import annotations

import json

import psycopg
import pytest

from tests.integration import test_limits

pytestmark = pytest.mark.usefixtures("django_db_setup")

q = test_limits.q  # the queue fixture (made and dropped by this module's db)


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    return pg_connect()


def slot_rows_read(conn: psycopg.Connection) -> int:
    """Slot rows this transaction has read so far, by any scan."""
    row = conn.execute(
        "SELECT coalesce(seq_tup_read, 0) + coalesce(idx_tup_fetch, 0)"
        " FROM pg_stat_xact_all_tables WHERE relid = 'pgmq.queue_limit_slots'::regclass"
    ).fetchone()
    assert row is not None
    return row[0]


def test_a_claim_reads_its_batch_of_slots_without_statistics(db, pg_connect, q):
    if not db.execute("SELECT rolsuper FROM pg_roles WHERE rolname = current_user").fetchone()[0]:
        pytest.skip("needs a superuser (clears the slot table's statistics)")
    db.execute(
        "SELECT pgmq.set_queue_attributes(%s, %s::jsonb)",
        [q, json.dumps({"max_in_flight": 100_000})],
    )
    made = db.execute(
        "SELECT count(*) FROM pgmq.queue_limit_slots WHERE queue_name = lower(%s) AND kind = 'f'",
        [q],
    ).fetchone()[0]
    assert made >= 1000  # the slots made up front (pgmq._limit_prefill)
    db.execute("SELECT pgmq.send_batch(%s, array_fill('{}'::jsonb, ARRAY[40]))", [q])
    db.execute("ANALYZE pgmq.queue_limit_slots")
    db.execute(
        "DELETE FROM pg_catalog.pg_statistic WHERE starelid = 'pgmq.queue_limit_slots'::regclass"
    )
    reader = pg_connect()  # a new session: its plans are made without statistics
    reader.autocommit = False
    try:
        for _ in range(3):
            before = slot_rows_read(reader)
            got = reader.execute("SELECT msg_id FROM pgmq.read(%s, 300, 10)", [q]).fetchall()
            assert len(got) == 10
            # ten slots taken (and a look at the rows above the limit: none); with the
            # plan by t, about 2 x 1,024
            assert slot_rows_read(reader) - before <= 40
            reader.commit()
    finally:
        reader.close()
