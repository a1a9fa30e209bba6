"""Workflows under the grant model: an application role (pgmq_grant) creates, acknowledges and
cancels workflows through the functions; it cannot write the workflow tables itself."""

from __future__ import annotations

import uuid

import psycopg
import pytest
from psycopg import sql
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def queues(pg_connect):
    admin = pg_connect()
    names = [f"wr_{uuid.uuid4().hex[:12]}" for _ in range(2)]
    for name in names:
        admin.execute("SELECT pgmq.create(%s)", [name])
    yield names
    for name in names:
        admin.execute("SELECT pgmq.drop_queue(%s)", [name])


def test_an_app_role_drives_a_workflow_and_cannot_write_its_tables(app_role, queues) -> None:
    _, dsn = app_role
    q, cb = queues
    app = psycopg.connect(dsn, autocommit=True)
    try:
        spec = [
            {"step": "a", "queue": q, "message": {}},
            {"step": "b", "queue": cb, "message": {}, "after": ["a"]},
        ]
        wid = app.execute("SELECT pgmq.create_workflow(%s)", [Jsonb(spec)]).fetchone()[0]
        (a,) = app.execute("SELECT msg_id FROM pgmq.read(%s, 30, 1)", [q]).fetchall()
        # a plain DELETE on the queue table, as any client may run: the step advances
        app.execute(
            sql.SQL("DELETE FROM pgmq.{} WHERE msg_id = %s").format(sql.Identifier(f"q_{q}")),
            [a[0]],
        )
        rows = app.execute("SELECT step, status FROM pgmq.workflow_status(%s)", [wid]).fetchall()
        assert rows == [("a", "done"), ("b", "sent")]
        for statement in (
            "UPDATE pgmq.workflow_step SET status = 'done'",
            "DELETE FROM pgmq.workflow_stripe",
            "INSERT INTO pgmq.workflow (on_failure, step_count) VALUES ('cancel', 1)",
        ):
            with pytest.raises(psycopg.errors.InsufficientPrivilege):
                app.execute(statement)
        # a forged header on its own message finishes nothing
        forged = app.execute(
            "SELECT pgmq.send(%s, '{}'::jsonb, %s)",
            [cb, Jsonb({"workflow": {"id": wid, "step": "b"}})],
        ).fetchone()[0]
        app.execute("SELECT pgmq.delete(%s, %s::bigint)", [cb, forged])
        assert app.execute(
            "SELECT status FROM pgmq.workflow_status(%s) WHERE step = 'b'", [wid]
        ).fetchone() == ("sent",)
        assert app.execute("SELECT pgmq.cancel_workflow(%s)", [wid]).fetchone() == (1,)
    finally:
        app.close()


def test_a_role_without_the_grant_may_not_send_through_a_workflow(pg_connect, pg_dsn, queues):
    admin = pg_connect()
    name = f"pgmq_out_{uuid.uuid4().hex[:8]}"
    admin.execute(sql.SQL("CREATE ROLE {} LOGIN PASSWORD 'x'").format(sql.Identifier(name)))
    admin.execute(sql.SQL("GRANT USAGE ON SCHEMA pgmq TO {}").format(sql.Identifier(name)))
    try:
        outsider = psycopg.connect(f"{pg_dsn} user={name} password=x", autocommit=True)
        spec = [{"step": "a", "queue": queues[0], "message": {}}]
        with pytest.raises(psycopg.errors.InsufficientPrivilege, match='step "a": role'):
            outsider.execute("SELECT pgmq.create_workflow(%s)", [Jsonb(spec)])
        outsider.close()
    finally:
        admin.execute(sql.SQL("REVOKE ALL ON SCHEMA pgmq FROM {}").format(sql.Identifier(name)))
        admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))
