"""The two-role deployment: an owner runs migrate, an application role does the rest.

Real roles on the test server, a scratch database owned by the owner role, and
subprocesses (manage.py, a worker, the Tasks worker, the Celery transport) whose
DATABASE_URL names the role they run as.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from urllib.parse import quote

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from tests.scratch import Scratch

pytestmark = pytest.mark.django_db(transaction=True)


@dataclass
class Role:
    """A login role and how to reach the scratch database as it."""

    name: str
    password: str
    scratch: Scratch

    @property
    def dsn(self) -> str:
        return make_conninfo(self.scratch.dsn, user=self.name, password=self.password)

    def connect(self) -> psycopg.Connection:
        return psycopg.connect(self.dsn, autocommit=True)

    @property
    def env(self) -> dict[str, str]:
        url = self.scratch.env["DATABASE_URL"]
        rest = url.split("@", 1)[1]
        user = f"{quote(self.name, safe='')}:{quote(self.password, safe='')}"
        return {**self.scratch.env, "DATABASE_URL": f"postgresql://{user}@{rest}"}

    def manage(self, *args: str):
        return Scratch(self.dsn, self.env).manage(*args)

    def python(self, *args: str):
        return Scratch(self.dsn, self.env).python(*args)


@pytest.fixture
def roles(scratch: Scratch) -> Iterator[dict[str, Role]]:
    """owner (owns the database, runs migrate), app and bare (no grant): LOGIN, not superuser."""
    tag = uuid.uuid4().hex[:8]
    made = {
        kind: Role(f"pgmq_{kind}_{tag}", uuid.uuid4().hex, scratch)
        for kind in ("owner", "app", "bare")
    }
    dbname = conninfo_to_dict(scratch.dsn)["dbname"]
    with scratch.connect() as admin:
        for role in made.values():
            admin.execute(
                sql.SQL(
                    "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD {}"
                ).format(sql.Identifier(role.name), sql.Literal(role.password))
            )
        admin.execute(
            sql.SQL("ALTER DATABASE {} OWNER TO {}").format(
                sql.Identifier(dbname), sql.Identifier(made["owner"].name)
            )
        )
    try:
        yield made
    finally:
        names = sql.SQL(", ").join(sql.Identifier(role.name) for role in made.values())
        with scratch.connect() as admin:
            admin.execute(
                sql.SQL("ALTER DATABASE {} OWNER TO CURRENT_USER").format(sql.Identifier(dbname))
            )
            for role in reversed(made.values()):  # the owner's default privileges name the app
                admin.execute(sql.SQL("DROP OWNED BY {} CASCADE").format(sql.Identifier(role.name)))
            admin.execute(sql.SQL("DROP ROLE {}").format(names))


def ok(result) -> str:
    assert result.returncode == 0, result.stderr + result.stdout
    return result.stdout


@pytest.fixture
def deployed(roles: dict[str, Role]) -> dict[str, Role]:
    """The owner migrated, made the queues and granted the application role."""
    owner, app = roles["owner"], roles["app"]
    ok(owner.manage("migrate", "-v", "0"))
    for queue in ("appq", "appq_dlq", "celeryq"):  # a worker's dead-letter queue too
        ok(owner.manage("pgmq_create", queue))
    # Task queues are prepared by the owner's first worker run (queue, index, notify trigger).
    ok(owner.manage("pgmq_consume", "--tasks", "emails", "--until-empty"))
    # A queue's redrive attributes are its policy: the owner's first worker run sets them.
    ok(owner.manage("pgmq_consume", "appq", "--handler", "tests.handlers.handle", "--until-empty"))
    assert "may run message operations" in ok(owner.manage("pgmq_grant", app.name))
    with owner.connect() as conn:  # the project's own table, written by the test handler
        conn.execute(sql.SQL("GRANT ALL ON demo_handlerrun TO {}").format(sql.Identifier(app.name)))
    return roles


def test_the_application_role_runs_every_message_operation(deployed):
    owner, app = deployed["owner"], deployed["app"]
    out = json.loads(ok(app.python("-m", "tests.app_role", "appq", "emails", "celeryq")))
    assert out["send"] == 3
    assert out["read"] == [1, 2]
    assert out["archive"] == [1]
    assert out["delete"] == [2]
    assert out["set_vt"] == 3
    assert out["pop"] == [3]
    assert out["metrics"] == 3
    assert out["metrics_all"] == out["list_queues"] == ["appq", "appq_dlq", "celeryq", "emails"]
    assert out["purge"] == 0
    assert "appq" in out["dashboard_all_stats"]
    assert out["browse"] == [1]
    assert out["celery"] == {"c": 1}
    # with psycopg's prepared statements on, the queue's own statements (send, read,
    # archive, delete, pop), each prepared on the role's connection
    assert out["prepared"] == {
        "read": [0, 1],
        "archive": True,
        "delete": True,
        "pop": [2],
        "statements": 5,
    }
    # Without --create-queues: no queue of its own, and never the owner's queue; the
    # error names the role, the privilege and the command that grants it.
    for refused in ("create_queue", "drop_owners_queue"):
        assert out[refused].startswith("ERROR InsufficientPrivilege: ")
        assert f'role "{app.name}" does not hold the pgmq privilege create_queues' in out[refused]
        assert "pgmq_grant ROLE --create-queues" in out[refused]
    assert out["list_queues"] == ["appq", "appq_dlq", "celeryq", "emails"]  # nothing made
    assert out["pause_queue"].startswith("ERROR InsufficientPrivilege: ")
    assert "permission denied for table queue_attributes" in out["write_attributes"]

    # The worker and the Tasks worker, as the application role.
    ok(app.manage("pgmq_send", "appq", '{"n": 9}'))
    ok(
        app.manage(
            "pgmq_consume",
            "appq",
            "--handler",
            "tests.handlers.handle",
            "--until-empty",
            "--poll-interval",
            "0.05",
        )
    )
    ok(app.manage("pgmq_consume", "--tasks", "emails", "--until-empty", "--poll-interval", "0.05"))
    with owner.connect() as conn:
        # message 1, the prepared round's first and last (the worker took the last), {"n": 9}
        assert conn.execute("SELECT count(*) FROM pgmq.a_appq").fetchone()[0] == 4
        status = conn.execute(
            "SELECT status, return_value FROM django_pgmq_taskresultrecord WHERE id = %s",
            [uuid.UUID(out["task_enqueue"])],
        ).fetchone()
        assert status == ("SUCCESSFUL", 3)


def test_with_create_queues_it_makes_and_drops_its_own_queues_only(deployed):
    owner, app = deployed["owner"], deployed["app"]
    ok(owner.manage("pgmq_grant", app.name, "--create-queues"))
    ok(app.manage("pgmq_create", "mine"))
    ok(app.manage("pgmq_send", "mine", '{"n": 1}'))
    with owner.connect() as conn:  # the owner's, like every queue, and served by it
        assert conn.execute("SELECT count(*) FROM pgmq.q_mine").fetchone()[0] == 1
        owners = conn.execute(
            "SELECT DISTINCT pg_get_userbyid(c.relowner) FROM pg_class c"
            " WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relname ~ '(^|_)mine'"
        ).fetchall()
        assert owners == [(owner.name,)]  # tables, sequence, indexes
    assert "dropped" in ok(app.manage("pgmq_drop", "mine")).lower()
    refused = app.manage("pgmq_drop", "appq")
    assert refused.returncode == 1
    assert "must be owner of table q_appq" in refused.stderr
    assert "Traceback" not in refused.stderr and len(refused.stderr.strip().splitlines()) == 1
    # A queue the owner creates after the grant is the role's to use at once.
    ok(owner.manage("pgmq_create", "later"))
    ok(app.manage("pgmq_send", "later", '{"n": 1}'))


def test_a_role_without_the_grant_gets_a_named_error_and_revoke_takes_it_back(deployed):
    owner, app, bare = deployed["owner"], deployed["app"], deployed["bare"]
    refused = bare.manage("pgmq_send", "appq", '{"n": 1}')
    assert refused.returncode == 1
    line = refused.stderr.strip()
    assert "Traceback" not in line and len(line.splitlines()) == 1
    assert "permission denied for schema pgmq" in line and "pgmq_grant" in line

    ok(owner.manage("pgmq_grant", app.name, "--revoke"))
    refused = app.manage("pgmq_read", "appq")
    assert refused.returncode == 1 and "permission denied" in refused.stderr


def test_underscore_helpers_are_not_executable_by_public(deployed):
    owner, bare = deployed["owner"], deployed["bare"]
    with owner.connect() as conn:
        conn.execute(sql.SQL("GRANT USAGE ON SCHEMA pgmq TO {}").format(sql.Identifier(bare.name)))
        runnable = conn.execute(
            "SELECT p.proname FROM pg_proc p WHERE p.pronamespace = 'pgmq'::regnamespace "
            "AND p.proname LIKE '\\_%%' AND has_function_privilege('public', p.oid, 'EXECUTE')"
        ).fetchall()
    assert runnable == []
    with bare.connect() as conn, pytest.raises(psycopg.errors.InsufficientPrivilege):
        conn.execute("SELECT pgmq._require_queue('appq')")


def test_the_owners_index_build_gives_way_to_the_application_roles_drop(deployed):
    """The owner builds every index (it owns every table); its build of a queue's index
    gives way to the drop of that queue by the --create-queues role that created it
    (advisory locks, pg_locks and a libpq cancel: the drop, an owner function, waits for
    the build's cancellation, never meets it on the table)."""
    from django_pgmq import index_builds
    from tests.integration.test_index_build_lock import (
        Run,
        table_lock_holder,
        until,
        waits_for_a_transaction,
    )

    owner, app = deployed["owner"], deployed["app"]
    ok(owner.manage("pgmq_grant", app.name, "--create-queues"))
    with owner.connect() as look, psycopg.connect(app.dsn) as dropper:
        dropper.execute("SELECT pgmq.create('mine_idx')")
        dropper.commit()
        with look.transaction():  # deferred, as inside the manager's atomic(): a wish
            look.execute("SELECT pg_catalog.set_config('pgmq.defer_index_builds', 'on', true)")
            look.execute("SELECT pgmq.set_queue_attributes('mine_idx', '{\"priorities\": true}')")
        dropper.execute("SELECT pgmq.send('mine_idx', '{}')")  # older than the build
        build = Run(lambda: index_builds.build_pending_dsn(owner.dsn))
        build.start()
        builder = until(lambda: table_lock_holder(look, "mine_idx"), "the build's lock")
        until(lambda: waits_for_a_transaction(look, builder), "the build to wait")
        assert dropper.execute("SELECT pgmq.drop_queue('mine_idx')").fetchone() == (True,)
        dropper.commit()
        assert build.outcome() == []
        assert look.execute("SELECT to_regclass('pgmq.q_mine_idx_priority')").fetchone() == (None,)
