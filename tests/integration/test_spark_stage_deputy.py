"""The Spark staging functions touch staging tables only (a confused deputy).

An application role may no longer write pgmq.spark_stage (its rows are written by the
owner's functions), but a row naming a queue's table (planted by an older version's
application role, or by hand) must still never make the owner drop, empty or read it.
"""

from __future__ import annotations

import psycopg
import pytest

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def victim(pg_connect, queue_name):
    owner = pg_connect()
    owner.execute("SELECT pgmq.create(%s)", [queue_name])
    owner.execute("SELECT pgmq.send(%s, '{\"keep\": 1}')", [queue_name])
    yield queue_name
    owner.execute("SELECT pgmq.drop_queue(%s)", [queue_name])


def plant(dsn: str, table: str, queue: str) -> None:
    """A stale staging row naming ``table``, written as the role ``dsn`` connects as."""
    with psycopg.connect(dsn, autocommit=True) as app:
        app.execute(
            "INSERT INTO pgmq.spark_stage (stage_table, queue_name, created_at) "
            "VALUES (%s, %s, now() - interval '2 days')",
            [table, queue],
        )


def live_rows(conn, queue: str) -> int:
    return conn.execute(f'SELECT count(*) FROM pgmq."q_{queue}"').fetchone()[0]


def test_an_application_role_cannot_plant_a_staging_row(app_role, victim):
    with pytest.raises(psycopg.errors.InsufficientPrivilege, match="spark_stage"):
        plant(app_role[1], f"q_{victim}", victim)


def test_drop_stale_leaves_a_queue_table_named_by_a_planted_row(pg_connect, pg_dsn, victim):
    plant(pg_dsn, f"q_{victim}", victim)
    owner = pg_connect()
    assert owner.execute("SELECT pgmq.spark_stage_drop_stale('1 day')").fetchone() == (0,)
    assert live_rows(owner, victim) == 1
    # The planted row is gone, so the next run does not warn again.
    assert owner.execute(
        "SELECT count(*) FROM pgmq.spark_stage WHERE stage_table = %s", [f"q_{victim}"]
    ).fetchone() == (0,)


@pytest.mark.parametrize("call", ["spark_stage_abort(%s)", "spark_stage_commit(%s, '{1}')"])
def test_abort_and_commit_refuse_a_table_that_is_not_a_stage(pg_connect, pg_dsn, victim, call):
    plant(pg_dsn, f"q_{victim}", victim)
    owner = pg_connect()
    with pytest.raises(psycopg.Error) as caught:
        owner.execute(f"SELECT pgmq.{call}", [f"q_{victim}"])
    assert caught.value.sqlstate == "PQ004"
    assert "is not a Spark staging table" in str(caught.value)
    assert live_rows(owner, victim) == 1


def test_a_table_with_a_stage_name_but_another_shape_is_refused(pg_connect, pg_dsn, victim):
    owner = pg_connect()
    fake = "spark_stage_" + "0" * 32
    owner.execute(f"CREATE TABLE pgmq.{fake} (keep int)")
    try:
        plant(pg_dsn, fake, victim)
        with pytest.raises(psycopg.Error, match=r"not the table pgmq\.spark_stage_create makes"):
            owner.execute("SELECT pgmq.spark_stage_abort(%s)", [fake])
        assert owner.execute("SELECT to_regclass(%s) IS NOT NULL", [f"pgmq.{fake}"]).fetchone()[0]
    finally:
        owner.execute(f"DROP TABLE pgmq.{fake}")
        owner.execute("DELETE FROM pgmq.spark_stage WHERE stage_table = %s", [fake])


def test_real_stages_are_still_dropped_and_aborted(pg_connect, victim):
    owner = pg_connect()
    stale = owner.execute("SELECT pgmq.spark_stage_create(%s)", [victim]).fetchone()[0]
    owner.execute(
        "UPDATE pgmq.spark_stage SET created_at = now() - interval '2 days' WHERE stage_table = %s",
        [stale],
    )
    aborted = owner.execute("SELECT pgmq.spark_stage_create(%s)", [victim]).fetchone()[0]
    assert owner.execute("SELECT pgmq.spark_stage_drop_stale('1 day')").fetchone() == (1,)
    assert owner.execute("SELECT pgmq.spark_stage_abort(%s)", [aborted]).fetchone() == (True,)
    for stage in (stale, aborted):
        assert owner.execute("SELECT to_regclass(%s)", [f"pgmq.{stage}"]).fetchone() == (None,)
