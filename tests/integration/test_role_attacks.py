"""Attacks of one role on another, with real roles: each must fail.

The owner ran migrate (it owns schema pgmq and everything in it); ``app`` was granted
message operations, ``creator`` also --create-queues, ``manager`` also --manage-queues,
``bare`` nothing. An application role must never make another role run its code, nor
rewrite a queue's policy, nor take or plant a queue's tables (docs/guide/roles.md).
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator

import psycopg
import pytest
from psycopg import sql
from psycopg.conninfo import conninfo_to_dict

from tests.integration.test_two_roles import Role, ok
from tests.scratch import Scratch

pytestmark = pytest.mark.django_db(transaction=True)

KINDS = ("owner", "app", "creator", "manager", "bare")

# The side tables no application role may write (their changes go through functions).
POLICY_TABLES = (
    "meta",
    "queue_attributes",
    "queue_limit_state",
    "celery_queue",
    "schedules",
    "topic_bindings",
    "queue_index_wanted",
)
WRITES = {
    "INSERT": "INSERT INTO pgmq.{} DEFAULT VALUES",
    "UPDATE": "UPDATE pgmq.{} SET {} = {}",
    "DELETE": "DELETE FROM pgmq.{}",
    "TRUNCATE": "TRUNCATE pgmq.{}",
}


def _ident(name: str) -> sql.Identifier:
    return sql.Identifier(name)


@pytest.fixture
def cast(scratch: Scratch) -> Iterator[dict[str, Role]]:
    """Five login roles (not superusers); the owner owns the scratch database."""
    tag = uuid.uuid4().hex[:8]
    made = {kind: Role(f"pgmq_{kind}_{tag}", uuid.uuid4().hex, scratch) for kind in KINDS}
    dbname = conninfo_to_dict(scratch.dsn)["dbname"]
    with scratch.connect() as admin:
        for role in made.values():
            admin.execute(
                sql.SQL(
                    "CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD {}"
                ).format(_ident(role.name), sql.Literal(role.password))
            )
        admin.execute(
            sql.SQL("ALTER DATABASE {} OWNER TO {}").format(
                _ident(dbname), _ident(made["owner"].name)
            )
        )
    try:
        yield made
    finally:
        with scratch.connect() as admin:
            admin.execute(sql.SQL("ALTER DATABASE {} OWNER TO CURRENT_USER").format(_ident(dbname)))
            for role in reversed(made.values()):
                admin.execute(sql.SQL("DROP OWNED BY {} CASCADE").format(_ident(role.name)))
            admin.execute(
                sql.SQL("DROP ROLE {}").format(
                    sql.SQL(", ").join(_ident(r.name) for r in made.values())
                )
            )


@pytest.fixture
def deployed(cast: dict[str, Role]) -> dict[str, Role]:
    """Migrated by the owner, one queue of the owner's, every role but bare granted."""
    owner = cast["owner"]
    ok(owner.manage("migrate", "-v", "0"))
    ok(owner.manage("pgmq_create", "ownq"))
    ok(owner.manage("pgmq_grant", cast["app"].name))
    ok(owner.manage("pgmq_grant", cast["creator"].name, "--create-queues"))
    said = ok(owner.manage("pgmq_grant", cast["manager"].name, "--manage-queues"))
    assert "may change queues' attributes, schedules and topic bindings" in said
    with owner.connect() as conn:
        assert conn.execute(
            "SELECT role_name::text, create_queues, manage_queues FROM pgmq.app_role ORDER BY 1"
        ).fetchall() == sorted(
            [
                (cast["app"].name, False, False),
                (cast["creator"].name, True, False),
                (cast["manager"].name, False, True),
            ]
        )
    return cast


def refused(conn: psycopg.Connection, statement: str, *params: object) -> str:
    """The error text of a statement that must fail with 42501 (or another error)."""
    with pytest.raises(psycopg.Error) as caught:
        conn.execute(statement, params or None)
    return str(caught.value)


def owner_of(conn: psycopg.Connection, relation: str) -> str | None:
    row = conn.execute(
        "SELECT pg_get_userbyid(c.relowner) FROM pg_class c WHERE c.oid = to_regclass(%s)",
        [relation],
    ).fetchone()
    return row[0] if row else None


def test_no_application_role_can_create_in_pgmq_or_plant_a_queues_table(deployed):
    owner = deployed["owner"]
    with owner.connect() as conn:
        creators = conn.execute(
            "SELECT r.rolname FROM pg_roles r"
            " WHERE has_schema_privilege(r.oid, 'pgmq', 'CREATE') AND NOT r.rolsuper"
        ).fetchall()
    assert creators == [(owner.name,)]
    for kind in ("app", "creator", "manager"):
        with deployed[kind].connect() as conn:
            for planted in ("pgmq.a_future", "pgmq.q_future"):
                text = refused(conn, f"CREATE TABLE {planted} (msg_id bigint)")
                assert "permission denied for schema pgmq" in text
            text = refused(
                conn,
                "CREATE FUNCTION pgmq.send(queue_name varchar, msg jsonb, headers jsonb)"
                " RETURNS SETOF bigint LANGUAGE sql AS 'SELECT 1::bigint'",
            )
            assert "permission denied for schema pgmq" in text


def test_a_table_planted_by_a_superuser_for_another_role_is_refused_not_adopted(deployed, scratch):
    owner, creator, bare = deployed["owner"], deployed["creator"], deployed["bare"]
    with scratch.connect() as admin:  # a superuser plants them, owned by another role
        for table in ("a_future", "q_later"):
            admin.execute(f"CREATE TABLE pgmq.{table} (msg_id bigint)")
            admin.execute(
                sql.SQL("ALTER TABLE {} OWNER TO {}").format(
                    sql.Identifier("pgmq", table), _ident(bare.name)
                )
            )
    for role, queue in ((owner, "future"), (creator, "later")):
        with role.connect() as conn:
            text = refused(conn, "SELECT pgmq.create(%s)", queue)
            assert "is owned by role" in text and bare.name in text
            assert conn.execute(
                "SELECT count(*) FROM pgmq.meta WHERE queue_name = %s", [queue]
            ).fetchone() == (0,)
    with owner.connect() as conn:
        assert owner_of(conn, "pgmq.a_future") == bare.name
        assert owner_of(conn, "pgmq.q_future") is None  # nothing built beside it
        assert owner_of(conn, "pgmq.q_later") == bare.name


def test_the_creator_owns_nothing_so_it_cannot_attach_code_to_its_queue(deployed):
    owner, creator = deployed["owner"], deployed["creator"]
    with creator.connect() as conn:
        conn.execute("SELECT pgmq.create('its_q')")
        conn.execute("SELECT pgmq.create_unlogged('its_u')")
        conn.execute("SELECT pgmq.send('its_q', '{}')")  # and uses it
        assert conn.execute("SELECT msg_id FROM pgmq.read('its_q', 30, 1)").fetchone() == (1,)
        conn.execute(
            "CREATE FUNCTION pg_temp.evil() RETURNS trigger LANGUAGE plpgsql"
            " AS 'BEGIN RETURN NEW; END'"
        )
        for table in ("q_its_q", "a_its_q", "q_its_u"):
            text = refused(
                conn,
                f"CREATE TRIGGER evil BEFORE INSERT ON pgmq.{table}"
                " FOR EACH ROW EXECUTE FUNCTION pg_temp.evil()",
            )
            assert "permission denied" in text or "must be owner" in text
            text = refused(conn, f"ALTER TABLE pgmq.{table} ENABLE ROW LEVEL SECURITY")
            assert "must be owner" in text
    with owner.connect() as conn:
        objects = conn.execute(
            "SELECT DISTINCT pg_get_userbyid(c.relowner) FROM pg_class c"
            " WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relname ~ 'its_'"
        ).fetchall()
        assert objects == [(owner.name,)]  # tables, sequences, indexes
        assert conn.execute(
            "SELECT queue_name, created_by FROM pgmq.queue_creator ORDER BY 1"
        ).fetchall() == [("its_q", creator.name), ("its_u", creator.name), ("ownq", owner.name)]


@pytest.mark.parametrize("table", POLICY_TABLES)
def test_no_application_role_writes_a_policy_table(deployed, table):
    owner = deployed["owner"]
    with owner.connect() as conn:
        column = conn.execute(
            "SELECT a.attname FROM pg_attribute a WHERE a.attrelid = %s::regclass"
            " AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum LIMIT 1",
            [f"pgmq.{table}"],
        ).fetchone()[0]
    for kind in ("app", "creator", "manager"):
        with deployed[kind].connect() as conn:
            for verb, template in WRITES.items():
                statement = template.format(table, column, column)
                text = refused(conn, statement)
                assert f"permission denied for table {table}" in text, (kind, verb, text)


def test_only_the_creator_or_the_owner_drops_a_queue(deployed):
    owner, app, creator = deployed["owner"], deployed["app"], deployed["creator"]
    with creator.connect() as conn:
        conn.execute("SELECT pgmq.create('c1')")
        conn.execute("SELECT pgmq.create('c2')")
        text = refused(conn, "SELECT pgmq.drop_queue('ownq')")
        assert "must be owner of table q_ownq" in text
    with app.connect() as conn:
        for queue in ("c1", "ownq"):
            text = refused(conn, "SELECT pgmq.drop_queue(%s)", queue)
            assert f'role "{app.name}" does not hold the pgmq privilege create_queues' in text
        # nor through the owner function itself
        text = refused(conn, "SELECT pgmq._drop_queue('c1')")
        assert "does not hold the pgmq privilege create_queues" in text
    with creator.connect() as conn:
        assert conn.execute("SELECT pgmq.drop_queue('c1')").fetchone() == (True,)
    with owner.connect() as conn:
        assert conn.execute("SELECT pgmq.drop_queue('c2')").fetchone() == (True,)
        assert conn.execute("SELECT pgmq.drop_queue('ownq')").fetchone() == (True,)
        assert conn.execute("SELECT count(*) FROM pgmq.queue_creator").fetchone() == (0,)


def test_create_needs_the_privilege_unless_the_queue_exists(deployed):
    app, manager, bare = deployed["app"], deployed["manager"], deployed["bare"]
    for role in (app, manager):
        with role.connect() as conn:
            for create in ("create", "create_unlogged", "create_non_partitioned"):
                text = refused(conn, f"SELECT pgmq.{create}('newq')")
                assert "does not hold the pgmq privilege create_queues" in text
                assert "pgmq_grant" in text  # the HINT
            text = refused(conn, "SELECT pgmq.create_partitioned('newq')")
            assert "permission denied" in text
            text = refused(conn, "SELECT pgmq._create_queue('newq', false)")
            assert "does not hold the pgmq privilege create_queues" in text
            conn.execute("SELECT pgmq.create('ownq')")  # kombu declares on every publish
    with bare.connect() as conn:
        text = refused(conn, "SELECT pgmq.create('newq')")
        assert "permission denied for schema pgmq" in text


def test_the_privilege_check_names_role_right_and_remedy(deployed):
    app, manager, creator = deployed["app"], deployed["manager"], deployed["creator"]
    with manager.connect() as conn:
        conn.execute("SELECT pgmq._require_privilege('manage_queues')")
        text = refused(conn, "SELECT pgmq._require_privilege('create_queues')")
        assert f'role "{manager.name}" does not hold the pgmq privilege create_queues' in text
    with creator.connect() as conn:
        conn.execute("SELECT pgmq._require_privilege('create_queues')")
    with app.connect() as conn:
        with pytest.raises(psycopg.errors.InsufficientPrivilege) as caught:
            conn.execute("SELECT pgmq._require_privilege('manage_queues')")
        assert caught.value.diag.message_hint == (
            f"The owner grants it with manage.py pgmq_grant {app.name} --manage-queues"
        )
        text = refused(conn, "SELECT pgmq._require_privilege('superpowers')")
        assert "unknown pgmq privilege" in text
        # an application role cannot grant itself anything
        text = refused(conn, "SELECT pgmq.grant_app_role(current_user, true)")
        assert "only the owner of schema pgmq" in text
        text = refused(conn, "SELECT * FROM pgmq.app_role")
        assert "permission denied for table app_role" in text
    with deployed["owner"].connect() as conn:  # the owner needs none (it would lose CREATE)
        text = refused(conn, "SELECT pgmq.grant_app_role(current_user)")
        assert "needs no grant" in text


def test_a_member_of_a_granted_role_holds_its_privilege_a_revoked_one_nothing(deployed, scratch):
    owner, creator, bare = deployed["owner"], deployed["creator"], deployed["bare"]
    with scratch.connect() as admin:
        admin.execute(sql.SQL("GRANT {} TO {}").format(_ident(creator.name), _ident(bare.name)))
    with bare.connect() as conn:  # SESSION_USER is bare, a member of creator
        conn.execute("SELECT pgmq.create('bareq')")
    ok(owner.manage("pgmq_grant", creator.name, "--revoke"))
    with owner.connect() as conn:
        assert conn.execute(
            "SELECT count(*) FROM pgmq.app_role WHERE role_name = %s", [creator.name]
        ).fetchone() == (0,)
        assert conn.execute(
            "SELECT has_table_privilege(%s, 'pgmq.q_bareq', 'SELECT')", [creator.name]
        ).fetchone() == (False,)
    with creator.connect() as conn:
        text = refused(conn, "SELECT pgmq.send('ownq', '{}')")
        assert "permission denied" in text


def test_queues_made_later_are_granted_to_every_registered_role(deployed):
    owner, app, creator = deployed["owner"], deployed["app"], deployed["creator"]
    with owner.connect() as conn:
        conn.execute("SELECT pgmq.create_partitioned('parted', '10', '100')")
    with creator.connect() as conn:
        conn.execute("SELECT pgmq.create('made_by_creator')")
    with app.connect() as conn:
        for queue in ("parted", "made_by_creator"):
            conn.execute("SELECT pgmq.send_batch(%s, array_fill('{}'::jsonb, ARRAY[12]))", [queue])
            assert (
                len(conn.execute("SELECT * FROM pgmq.read(%s, 30, 20)", [queue]).fetchall()) == 12
            )
            conn.execute("SELECT pgmq.archive(%s, 1::bigint)", [queue])
            assert conn.execute(
                "SELECT total_messages FROM pgmq.metrics(%s)", [queue]
            ).fetchone() == (12,)
            assert conn.execute("SELECT pgmq.purge_queue(%s)", [queue]).fetchone() == (11,)
        # partitions made by maintenance later are granted too
    with owner.connect() as conn:
        conn.execute("SELECT * FROM pgmq.maintain_partitions('parted')")
        missing = conn.execute(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " WHERE i.inhparent IN ('pgmq.q_parted'::regclass, 'pgmq.a_parted'::regclass)"
            " AND NOT has_table_privilege(%s, c.oid, 'SELECT, INSERT, UPDATE, DELETE')",
            [app.name],
        ).fetchall()
        assert missing == []


def test_drop_and_a_send_then_declare_transaction_do_not_deadlock(deployed):
    """kombu declares its queue on every publish: a transaction that sent to a queue
    (holding its table) and declares it again while drop_queue waits for that table
    (holding the queue lock) must not wait for drop_queue's lock: one lock order."""
    owner, app = deployed["owner"], deployed["app"]
    with owner.connect() as conn:
        conn.execute("SELECT pgmq.create('race')")
    sender = psycopg.connect(app.dsn)
    sender.execute("SET lock_timeout = '20s'")
    sender.execute("SELECT pgmq.send('race', '{}')")  # in a transaction, holds q_race
    result: dict[str, object] = {}

    def drop() -> None:
        try:
            with psycopg.connect(owner.dsn, autocommit=True) as dropper:
                result["pid"] = dropper.info.backend_pid
                result["dropped"] = dropper.execute("SELECT pgmq.drop_queue('race')").fetchone()
        except psycopg.Error as exc:  # pragma: no cover - the failure the test shows
            result["error"] = str(exc)

    dropping = threading.Thread(target=drop)
    dropping.start()
    try:
        with owner.connect() as look:  # the barrier: drop_queue waits for the sender's table
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline:
                waiting = look.execute(
                    "SELECT count(*) FROM pg_stat_activity"
                    " WHERE wait_event_type = 'Lock' AND query LIKE '%%drop_queue%%'"
                ).fetchone()[0]
                if waiting:
                    break
                time.sleep(0.05)
            assert waiting, "drop_queue never waited for the sender's table"
        sender.execute("SELECT pgmq.create('race')")  # kombu's declare: returns at once
        sender.execute("SELECT pgmq.send('race', '{}')")
        sender.commit()
    finally:
        sender.close()
        dropping.join(60)
    assert result.get("dropped") == (True,), result


def test_owner_functions_never_resolve_a_call_to_a_planted_overload(deployed, scratch):
    """The owner functions pin search_path: overloads with exact varchar/name/text
    signatures that the creator plants in a schema first on its own search_path never
    run inside them (they would run as the owner)."""
    creator = deployed["creator"]
    with scratch.connect() as admin:
        admin.execute(sql.SQL("GRANT CREATE ON SCHEMA public TO {}").format(_ident(creator.name)))
    with creator.connect() as conn:
        for signature in (
            "lower(character varying)",
            "lower(text)",
            "to_regclass(text)",
            "format(text, text)",
            "pg_has_role(name, oid, text)",
            "quote_ident(text)",
        ):
            name, args = signature.split("(", 1)
            conn.execute(
                f"CREATE FUNCTION public.{name}({args} RETURNS text LANGUAGE plpgsql AS"
                " $$ BEGIN RAISE EXCEPTION 'planted function ran as %', current_user; END $$"
            )
        conn.execute("SET search_path = public, pg_catalog")
        conn.execute("SELECT pgmq.create('hostile')")
        conn.execute("SELECT pgmq.create('hostile')")  # the existing queue's path
        text = refused(conn, "SELECT pgmq.drop_queue('ownq')")
        assert "must be owner of table q_ownq" in text
        assert conn.execute("SELECT pgmq.drop_queue('hostile')").fetchone() == (True,)
        conn.execute("SELECT pgmq._require_privilege('create_queues')")
        conn.execute("RESET search_path")
        conn.execute(
            "DROP FUNCTION public.lower(character varying), public.lower(text),"
            " public.to_regclass(text), public.format(text, text),"
            " public.pg_has_role(name, oid, text), public.quote_ident(text)"
        )
