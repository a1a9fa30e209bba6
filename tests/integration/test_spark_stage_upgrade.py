"""Migration 0017 lets the staging tables of Spark writes made before it hold rows
without a vt (no delay given: the queue's delivery_delay applies when they are sent),
as the tables pgmq.spark_stage_create makes now do; its reverse puts NOT NULL back."""

from __future__ import annotations

import psycopg
import pytest

from tests.scratch import needs_migrations

pytestmark = pytest.mark.slow

BEFORE, AFTER = "0016", "0017"


def vt_nullable(conn: psycopg.Connection, stage: str) -> bool:
    return conn.execute(
        "SELECT NOT attnotnull FROM pg_attribute "
        "WHERE attrelid = to_regclass(%s) AND attname = 'vt'",
        [f"pgmq.{stage}"],
    ).fetchone()[0]


@needs_migrations(BEFORE, AFTER)
def test_an_existing_streaming_stage_takes_rows_without_vt_after_0017(scratch):
    with scratch.connect() as conn:
        done = scratch.manage("migrate", "django_pgmq", BEFORE)
        assert done.returncode == 0, done.stderr
        conn.execute("SELECT pgmq.create('staged')")
        stage = conn.execute("SELECT pgmq.spark_stage_create('staged', 'w1')").fetchone()[0]
        assert not vt_nullable(conn, stage)

        done = scratch.manage("migrate", "django_pgmq", AFTER)
        assert done.returncode == 0, done.stderr
        assert vt_nullable(conn, stage)
        conn.execute(
            psycopg.sql.SQL(
                "INSERT INTO pgmq.{} (part, attempt, message) VALUES (0, 7, '{{\"n\": 1}}')"
            ).format(psycopg.sql.Identifier(stage))
        )
        conn.execute("SELECT pgmq.set_queue_attributes('staged', '{\"delivery_delay\": 60}')")
        moved = conn.execute("SELECT pgmq.spark_stage_commit(%s, '{7}', 1)", [stage]).fetchone()
        assert moved == (1,)
        delay = conn.execute(
            "SELECT extract(epoch FROM vt - enqueued_at) FROM pgmq.q_staged"
        ).fetchone()[0]
        assert 59 < delay < 61

        done = scratch.manage("migrate", "django_pgmq", BEFORE)
        assert done.returncode == 0, done.stderr
        assert not vt_nullable(conn, stage)
