"""Planted overloads never run: every call in the SQL API's bodies reaches the function meant.

A second real role (LOGIN, not superuser), given what a careless install gives it
(``CREATE`` on schema ``public`` to PUBLIC, as PostgreSQL 14 and older did by default and
pg_upgrade kept; and ``CREATE`` on schema ``pgmq``, as this project's ``--create-queues``
grant gave before), plants in every schema it can create in an overload of every function
any body of schema ``pgmq`` calls (the names read from the installed bodies: every
identifier followed by ``(`` in ``pg_proc.prosrc``, kept when pg_catalog or pgmq has a
function of that name), with ``varchar``, ``name`` or ``character`` in place of each
text-like argument (and of ``"any"`` and polymorphic ones), plus operators on those types.
An exact-type overload beats ``pg_catalog.lower(text)`` for a ``varchar`` argument even
though pg_catalog is searched first; only a qualified name with arguments of the declared
types resolves to the function meant.

Each planted body counts its runs on a sequence granted to PUBLIC (a rollback does not
undo it) and raises a WARNING naming itself. Then the OWNER, with the default search_path
``"$user", public``, runs every message operation, the FIFO readers, topics, notify,
attributes (deduplication, delay, priorities, limits, dead letters, pause), retention,
redrive, partitions, schedules, limits, Celery's functions and cleanup, the maintenance
calls and the manager's own prepared statements: the count must stay 0.

A caller whose search_path names pg_catalog explicitly AFTER a schema others can create
in is not supported (an identical-signature operator such as ``public.=(text, text)``
then wins over pg_catalog's in any SQL, the caller's own included);
``test_pg_catalog_last_is_not_supported`` records that.
"""

from __future__ import annotations

import json
import re
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import psycopg
import pytest
from django.db import connection
from psycopg import sql
from psycopg.conninfo import make_conninfo

from django_pgmq.manager import QueueManager

pytestmark = pytest.mark.django_db(transaction=True)

SUBSTITUTES = ("character varying", "name", "character")
TEXT_LIKE = {"text", "character varying", "name", "character", '"any"'}
ELEMENT = {"anyelement", "anynonarray", "anycompatible", "anycompatiblenonarray", "anyenum"}
ARRAYS = {"anyarray", "anycompatiblearray", "text[]", "character varying[]", "name[]"}
SKIP_RETURNS = {
    "trigger",
    "event_trigger",
    "internal",
    "language_handler",
    "fdw_handler",
    "index_am_handler",
    "tsm_handler",
    "table_am_handler",
    "cstring",
}
OPERATORS = {  # operator: result type
    "=": "boolean",
    "<>": "boolean",
    "<": "boolean",
    "<=": "boolean",
    ">": "boolean",
    ">=": "boolean",
    "~~": "boolean",
    "!~~": "boolean",
    "~~*": "boolean",
    "~": "boolean",
    "~*": "boolean",
    "!~": "boolean",
    "||": "text",
}
OPERAND_TYPES = ("text", "character varying", "name", "character")
CALLED = re.compile(r"(?<![\w$])([A-Za-z_][A-Za-z0-9_]*)\s*\(")


@dataclass
class Planted:
    role: str
    counter: str  # the sequence each planted body advances
    schemas: list[str]
    functions: int = 0
    operators: int = 0
    names: list[str] = field(default_factory=list)


def called_names(admin: psycopg.Connection) -> list[str]:
    """Every function name a body of schema pgmq calls that pg_catalog or pgmq defines."""
    known = {
        r[0]
        for r in admin.execute(
            "SELECT DISTINCT proname::text FROM pg_catalog.pg_proc"
            " WHERE pronamespace IN ('pg_catalog'::regnamespace, 'pgmq'::regnamespace)"
        )
    }
    names: set[str] = set()
    for (src,) in admin.execute(
        "SELECT prosrc FROM pg_catalog.pg_proc WHERE pronamespace = 'pgmq'::regnamespace"
    ):
        names.update(n.lower() for n in CALLED.findall(src) if n.lower() in known)
    return sorted(names)


def _variants(row: tuple) -> Iterator[tuple[list[str], list[str], str]]:
    """(IN argument types, OUT argument declarations, return type) of each overload to plant
    beside one existing function."""
    in_types, out_decls, ret, retset, nargdefaults, variadic = row
    if ret in SKIP_RETURNS:
        return
    replaceable = [
        i for i, t in enumerate(in_types) if t in TEXT_LIKE or t in ELEMENT or t in ARRAYS
    ]
    if not replaceable:
        return
    for sub in SUBSTITUTES:
        choices = [[i] for i in replaceable]
        if len(replaceable) > 1:
            choices.append(replaceable)
        for chosen in choices:
            types = list(in_types)
            poly = any(
                in_types[i] in ELEMENT or in_types[i] in ("anyarray", "anycompatiblearray")
                for i in chosen
            )
            for i, t in enumerate(in_types):
                if i in chosen or t == '"any"' or (poly and (t in ELEMENT)):
                    if t in ARRAYS:
                        types[i] = f"{sub}[]"
                    else:
                        types[i] = sub
                elif poly and t in ("anyarray", "anycompatiblearray"):
                    types[i] = f"{sub}[]"
            if types == list(in_types):
                continue
            result = ret
            outs = list(out_decls)
            if poly:
                result = {
                    **dict.fromkeys(ELEMENT, sub),
                    "anyarray": f"{sub}[]",
                    "anycompatiblearray": f"{sub}[]",
                }.get(ret, ret)
                outs = [
                    re.sub(
                        r"\b(anyelement|anynonarray|anycompatible|anycompatiblenonarray)$", sub, d
                    )
                    for d in outs
                ]
            polymorphic = ELEMENT | {"anyarray", "anycompatiblearray"}
            if result in polymorphic and not any(t in polymorphic for t in types):
                continue  # nothing left to resolve the result from
            if variadic and types[-1] != in_types[-1] and not types[-1].endswith("[]"):
                types[-1] = f"{types[-1]}[]"
            for n in range(len(types) - nargdefaults, len(types) + 1):
                if any(i >= n for i in chosen):
                    continue
                yield types[:n], outs, ("SETOF " if retset else "") + result


def plant(hostile: psycopg.Connection, planted: Planted, names: list[str]) -> None:
    """Create the overloads (as the hostile role); each one that cannot be made is skipped."""
    rows = hostile.execute(
        """
        SELECT p.proname::text,
               ARRAY(SELECT pg_catalog.format_type(t, NULL)
                     FROM pg_catalog.unnest(p.proargtypes::oid[]) WITH ORDINALITY AS a(t, o)
                     ORDER BY o),
               ARRAY(SELECT coalesce(n, '') FROM unnest(p.proargnames, p.proargmodes) AS a(n, m)
                     WHERE coalesce(m, 'i') IN ('i', 'b', 'v')),
               ARRAY(SELECT 'OUT ' || pg_catalog.quote_ident(coalesce(p.proargnames[o], 'c' || o))
                            || ' ' || pg_catalog.format_type(t, NULL)
                     FROM unnest(p.proallargtypes, p.proargmodes)
                          WITH ORDINALITY AS a(t, m, o)
                     WHERE m IN ('o', 't') ORDER BY o),
               pg_catalog.format_type(p.prorettype, NULL), p.proretset, p.pronargdefaults,
               p.provariadic <> 0
        FROM pg_catalog.pg_proc p
        WHERE p.pronamespace IN ('pg_catalog'::regnamespace, 'pgmq'::regnamespace)
          AND p.proname = ANY(%s) AND p.prokind IN ('f', 'a', 'w')
        """,
        [names],
    ).fetchall()
    seen: set[tuple] = set()
    counter = planted.counter
    for schema in planted.schemas:
        for name, in_types, in_names, *rest in rows:
            for types, outs, result in _variants((in_types, *rest)):
                key = (schema, name, tuple(types))
                if key in seen:
                    continue
                seen.add(key)
                label = f"{schema}.{name}({', '.join(types)})"
                args = ", ".join(  # the same names: a call in named notation matches too
                    ("VARIADIC " if i == len(types) - 1 and rest[4] and t.endswith("[]") else "")
                    + (
                        f"{sql.Identifier(in_names[i]).as_string(hostile)} "
                        if in_names[i : i + 1] and in_names[i]
                        else ""
                    )
                    + t
                    for i, t in enumerate(types)
                )
                if outs:
                    args = ", ".join([a for a in (args,) if a] + outs)
                back = (
                    "RETURN;"
                    if outs or result.startswith("SETOF") or result == "void"
                    else ("RETURN NULL;")
                )
                returns = f"RETURNS {result}" if not outs or result.startswith("SETOF") else ""
                body = (
                    f"BEGIN PERFORM pg_catalog.nextval({counter!r}::pg_catalog.regclass);"
                    f" RAISE WARNING 'hijacked: %', {label!r}; {back} END"
                )
                stmt = (
                    f"CREATE FUNCTION {sql.Identifier(schema).as_string(hostile)}"
                    f".{sql.Identifier(name).as_string(hostile)}({args}) {returns}"
                    f" LANGUAGE plpgsql AS $h${body}$h$"
                )
                try:
                    hostile.execute(stmt)
                    planted.functions += 1
                except psycopg.Error:
                    pass  # an existing identical signature, an unsupported pseudo-type
        for op, result in OPERATORS.items():
            for left in OPERAND_TYPES:
                for right in OPERAND_TYPES:
                    if left == right == "text":
                        continue
                    fn = f"hijack_op_{len(seen)}"
                    seen.add((schema, fn))
                    label = f"{schema}.{op}({left}, {right})"
                    answer = (  # the answer pg_catalog's would give: the run goes on
                        "pg_catalog.textcat($1::text, $2::text)"
                        if op == "||"
                        else f"$1::text OPERATOR(pg_catalog.{op}) $2::text"
                    )
                    body = (
                        f"BEGIN PERFORM pg_catalog.nextval({counter!r}::pg_catalog.regclass);"
                        f" RAISE WARNING 'hijacked: %', {label!r}; RETURN {answer}; END"
                    )
                    qs = sql.Identifier(schema).as_string(hostile)
                    try:
                        hostile.execute(
                            f"CREATE FUNCTION {qs}.{fn}({left}, {right}) RETURNS {result}"
                            f" LANGUAGE plpgsql AS $h${body}$h$"
                        )
                        hostile.execute(
                            f"CREATE OPERATOR {qs}.{op} (LEFTARG = {left}, RIGHTARG = {right},"
                            f" FUNCTION = {qs}.{fn})"
                        )
                        planted.operators += 1
                    except psycopg.Error:
                        pass


@pytest.fixture
def hostile(pg_connect: Callable[..., psycopg.Connection], pg_dsn: str) -> Iterator[Planted]:
    admin = pg_connect()
    admin.execute("SET search_path = pg_catalog, pg_temp")
    tag = uuid.uuid4().hex[:8]
    role, password = f"pgmq_hostile_{tag}", uuid.uuid4().hex
    ident = sql.Identifier(role)
    public_create = admin.execute(
        "SELECT has_schema_privilege('public', 'public', 'CREATE')"
    ).fetchone() == (True,)
    admin.execute(
        sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE PASSWORD {}").format(
            ident, sql.Literal(password)
        )
    )
    try:
        admin.execute("GRANT CREATE ON SCHEMA public TO PUBLIC")
        admin.execute(sql.SQL("GRANT USAGE, CREATE ON SCHEMA pgmq TO {}").format(ident))
        counter = f"public.hijacked_{tag}"
        with psycopg.connect(
            make_conninfo(pg_dsn, user=role, password=password), autocommit=True
        ) as conn:
            conn.execute("SET search_path = pg_catalog, pg_temp")
            conn.execute(f"CREATE SEQUENCE {counter}")
            conn.execute(f"GRANT ALL ON SEQUENCE {counter} TO PUBLIC")
            schemas = [
                r[0]
                for r in conn.execute(
                    "SELECT nspname::text FROM pg_namespace"
                    " WHERE has_schema_privilege(oid, 'CREATE')"
                    " AND nspname !~ '^pg_(temp|toast)' ORDER BY 1"
                )
            ]
            assert {"public", "pgmq"} <= set(schemas)
            planted = Planted(role, counter, schemas)
            planted.names = called_names(admin)
            plant(conn, planted, planted.names)
        yield planted
    finally:
        admin.execute(sql.SQL("DROP OWNED BY {} CASCADE").format(ident))
        admin.execute(sql.SQL("DROP ROLE {}").format(ident))
        if not public_create:
            admin.execute("REVOKE CREATE ON SCHEMA public FROM PUBLIC")


def hijacks(admin: psycopg.Connection, planted: Planted) -> int:
    last, called = admin.execute(
        sql.SQL("SELECT last_value, is_called FROM {}").format(
            sql.SQL(".").join(map(sql.Identifier, planted.counter.split(".")))
        )
    ).fetchone()
    return last if called else 0


class Owner:
    """The owner's session running SQL, collecting each step's warnings and errors."""

    def __init__(self, conn: psycopg.Connection) -> None:
        self.conn = conn
        self.warnings: list[str] = []
        self.errors: list[str] = []
        self.step = ""
        conn.add_notice_handler(self._notice)

    def _notice(self, diag: Any) -> None:
        if diag.severity == "WARNING" and (diag.message_primary or "").startswith("hijacked"):
            caller = next(  # the body that made the call, from the WARNING's context
                (ln for ln in (diag.context or "").splitlines()[1:] if ln.strip()), ""
            )
            self.warnings.append(f"{self.step}: {diag.message_primary} from {caller}")

    def __call__(self, query: str, *params: Any) -> list[tuple]:
        self.step = query
        try:
            cur = self.conn.execute(query, params or None)
            return cur.fetchall() if cur.description else []
        except psycopg.Error as exc:
            self.errors.append(f"{query}: {exc}".splitlines()[0])
            return []


def message_operations(run: Owner, tag: str) -> None:
    q, qa, dlq, qp, qd, part, fifo = (
        f"hq_{tag}",
        f"hqa_{tag}",
        f"hqa_{tag}_dlq",
        f"hqp_{tag}",
        f"hqd_{tag}",
        f"hqt_{tag}",
        f"hqf_{tag}",
    )
    m = json.dumps({"n": 1})
    for queue in (q, qa, qp, qd, fifo):
        run("SELECT pgmq.create(%s)", queue)
    run("SELECT pgmq.create_unlogged(%s)", f"hqu_{tag}")
    run("SELECT pgmq.create_non_partitioned(%s)", f"hqn_{tag}")
    run("SELECT pgmq.validate_queue_name(%s)", q)
    # plain queue: every form of send, then every reader and acknowledgement
    run("SELECT pgmq.send(%s, %s::jsonb)", q, m)
    run("SELECT pgmq.send(%s, %s::jsonb, 0)", q, m)
    run("SELECT pgmq.send(%s, %s::jsonb, now())", q, m)
    run("SELECT pgmq.send(%s, %s::jsonb, '{\"h\": 1}'::jsonb)", q, m)
    run("SELECT pgmq.send(%s, %s::jsonb, '{\"h\": 1}'::jsonb, 0)", q, m)
    run("SELECT pgmq.send(%s, %s::jsonb, '{\"h\": 1}'::jsonb, now())", q, m)
    run("SELECT pgmq.send_batch(%s, ARRAY[%s::jsonb, %s::jsonb])", q, m, m)
    run("SELECT pgmq.send_batch(%s, ARRAY[%s::jsonb], 0)", q, m)
    run("SELECT pgmq.send_batch(%s, ARRAY[%s::jsonb], now())", q, m)
    run("SELECT pgmq.send_batch(%s, ARRAY[%s::jsonb], ARRAY['{}'::jsonb])", q, m)
    run("SELECT pgmq.send_batch(%s, ARRAY[%s::jsonb], ARRAY['{}'::jsonb], 0)", q, m)
    run("SELECT pgmq.send_batch(%s, ARRAY[%s::jsonb], ARRAY['{}'::jsonb], now())", q, m)
    for _ in range(3):  # the router keeps its statements after a few calls
        run("SELECT * FROM pgmq.read(%s, 0, 2)", q)
        run("SELECT * FROM pgmq.read(%s, 0, 1, '{\"n\": 1}'::jsonb)", q)
    run("SELECT * FROM pgmq.read_with_poll(%s, 0, 1, 1, 10)", q)
    ids = [r[0] for r in run("SELECT msg_id FROM pgmq.read(%s, 0, 10)", q)] + [10**12] * 10
    run("SELECT * FROM pgmq.set_vt(%s, %s::bigint, 0)", q, ids[0])
    run("SELECT * FROM pgmq.set_vt(%s, %s::bigint, now())", q, ids[0])
    run("SELECT * FROM pgmq.set_vt(%s, %s::bigint[], 0)", q, ids[:2])
    run("SELECT * FROM pgmq.set_vt(%s, %s::bigint[], now())", q, ids[:2])
    run("SELECT pgmq.archive(%s, %s::bigint)", q, ids[0])
    run("SELECT pgmq.archive(%s, %s::bigint[])", q, ids[1:3])
    run("SELECT pgmq.delete(%s, %s::bigint)", q, ids[3])
    run("SELECT pgmq.delete(%s, %s::bigint[])", q, ids[4:6])
    for _ in range(3):
        run("SELECT * FROM pgmq.pop(%s)", q)
        run("SELECT * FROM pgmq.pop(%s, 2)", q)
    run("SELECT * FROM pgmq.metrics(%s)", q)
    run("SELECT * FROM pgmq.metrics_all()")
    run("SELECT * FROM pgmq.list_queues()")
    run("SELECT pgmq.purge_queue(%s)", q)
    # FIFO groups
    run("SELECT pgmq.create_fifo_index(%s)", fifo)
    run("SELECT pgmq.create_fifo_indexes_all()")
    run("SELECT * FROM pgmq.pending_indexes()")
    for g in ("a", "a", "b"):
        run("SELECT pgmq.send(%s, %s::jsonb, %s::jsonb)", fifo, m, json.dumps({"x-pgmq-group": g}))
    for reader in ("read_grouped", "read_grouped_rr", "read_grouped_head"):
        run(f"SELECT * FROM pgmq.{reader}(%s, 0, 2)", fifo)
        run(f"SELECT * FROM pgmq.{reader}_with_poll(%s, 0, 1, 1, 10)", fifo)
    # topics
    run("SELECT pgmq.validate_routing_key('a.b')")
    run("SELECT pgmq.validate_topic_pattern('a.*')")
    run("SELECT pgmq.bind_topic('a.*', %s)", q)
    run("SELECT * FROM pgmq.test_routing('a.b')")
    run("SELECT * FROM pgmq.list_topic_bindings()")
    run("SELECT * FROM pgmq.list_topic_bindings(%s)", q)
    run("SELECT pgmq.send_topic('a.b', %s::jsonb)", m)
    run("SELECT pgmq.send_topic('a.b', %s::jsonb, 0)", m)
    run("SELECT pgmq.send_topic('a.b', %s::jsonb, '{}'::jsonb)", m)
    run("SELECT pgmq.send_topic('a.b', %s::jsonb, '{}'::jsonb, 0)", m)
    run("SELECT pgmq.send_batch_topic('a.b', ARRAY[%s::jsonb])", m)
    run("SELECT pgmq.send_batch_topic('a.b', ARRAY[%s::jsonb], 0)", m)
    run("SELECT pgmq.send_batch_topic('a.b', ARRAY[%s::jsonb], now())", m)
    run("SELECT pgmq.send_batch_topic('a.b', ARRAY[%s::jsonb], ARRAY['{}'::jsonb])", m)
    run("SELECT pgmq.send_batch_topic('a.b', ARRAY[%s::jsonb], ARRAY['{}'::jsonb], 0)", m)
    run("SELECT pgmq.send_batch_topic('a.b', ARRAY[%s::jsonb], ARRAY['{}'::jsonb], now())", m)
    run("SELECT pgmq.unbind_topic('a.*', %s)", q)
    # notify
    run("SELECT pgmq.enable_notify_insert(%s, 0)", q)
    run("SELECT pgmq.send(%s, %s::jsonb)", q, m)
    run("SELECT pgmq.update_notify_insert(%s, 10)", q)
    run("SELECT pgmq.send(%s, %s::jsonb)", q, m)
    run("SELECT * FROM pgmq.list_notify_insert_throttles()")
    run("SELECT pgmq.disable_notify_insert(%s)", q)
    # attributes: deduplication, priorities, limits, dead letters, retention; delay; pause
    attrs = {
        "deduplication_window": 60,
        "priorities": True,
        "max_in_flight": 50,
        "rate_limit": {"count": 1000, "seconds": 1},
        "dead_letter_queue": dlq,
        "max_receive_count": 1,
        "message_retention": 3600,
        "archive_retention": 3600,
        "max_message_size": 100000,
    }
    run("SELECT pgmq.set_queue_attributes(%s, %s::jsonb)", qa, json.dumps(attrs))
    run("SELECT pgmq.set_queue_attributes(%s, '{\"delivery_delay\": 1}'::jsonb)", qd)
    run("SELECT pgmq.set_queue_attributes(%s, '{\"paused\": true}'::jsonb)", qp)
    run("SELECT pgmq.get_queue_attributes(%s)", qa)
    for queue in (qa, qd, qp):
        run(
            'SELECT pgmq.send(%s, %s::jsonb, \'{"deduplication_id": "d1", "priority": 2}\'::jsonb)',
            queue,
            m,
        )
        run('SELECT pgmq.send(%s, %s::jsonb, \'{"deduplication_id": "d1"}\'::jsonb)', queue, m)
        run(
            "SELECT pgmq.send_batch(%s, ARRAY[%s::jsonb, %s::jsonb],"
            ' ARRAY[\'{"deduplication_id": "d2"}\'::jsonb, \'{"priority": 1}\'::jsonb])',
            queue,
            m,
            m,
        )
        run("SELECT pgmq.send(%s, %s::jsonb, 0)", queue, m)
        for _ in range(3):
            run("SELECT * FROM pgmq.read(%s, 0, 2)", queue)  # read twice: to the dead letters
            run("SELECT * FROM pgmq.read_with_poll(%s, 0, 1, 1, 10)", queue)
        got = [r[0] for r in run("SELECT msg_id FROM pgmq.read(%s, 30, 3)", queue)] + [10**12]
        if got:
            run("SELECT * FROM pgmq.set_vt(%s, %s::bigint, 30)", queue, got[0])
            run("SELECT pgmq.archive(%s, %s::bigint)", queue, got[0])
            run("SELECT pgmq.delete(%s, %s::bigint[])", queue, got[1:])
        run("SELECT * FROM pgmq.pop(%s, 1)", queue)
        run("SELECT * FROM pgmq.metrics(%s)", queue)
    run("SELECT * FROM pgmq.queue_limits(%s)", qa)
    run("SELECT * FROM pgmq.queue_limits()")
    run("SELECT * FROM pgmq.redrive(%s)", dlq)
    run("SELECT * FROM pgmq.redrive(%s, '{}'::jsonb, 10)", dlq)
    run("SELECT * FROM pgmq.enforce_retention(%s)", qa)
    run("SELECT * FROM pgmq.enforce_retention()")
    run(
        'SELECT pgmq.set_queue_attributes(%s, \'{"paused": false, "max_in_flight": null}\'::jsonb)',
        qp,
    )
    # a full max_in_flight queue: a claim marks it full, the next one walks past the slots
    # in flight, an acknowledgement wakes the readers waiting, a claim reuses its slot
    run("SELECT pgmq.set_queue_attributes(%s, '{\"max_in_flight\": 2}'::jsonb)", qp)
    run("SELECT pgmq.send_batch(%s, ARRAY[%s::jsonb, %s::jsonb, %s::jsonb])", qp, m, m, m)
    full = [r[0] for r in run("SELECT msg_id FROM pgmq.read(%s, 30, 1)", qp)]
    full += [r[0] for r in run("SELECT msg_id FROM pgmq.read(%s, 30, 5)", qp)] + [10**12]
    run("SELECT pgmq.archive(%s, %s::bigint)", qp, full[0])
    run("SELECT * FROM pgmq.read(%s, 30, 5)", qp)
    run("SELECT * FROM pgmq.set_vt(%s, %s::bigint, 0)", qp, full[1])
    run("SELECT pgmq.set_queue_attributes(%s, '{\"max_in_flight\": null}'::jsonb)", qp)
    # partitions
    run("SELECT pgmq.create_partitioned(%s, '10', '20')", part)
    run("SELECT pgmq.send_batch(%s, %s::jsonb[])", part, [m] * 25)
    run("SELECT * FROM pgmq.maintain_partitions(%s)", part)
    run("SELECT * FROM pgmq.maintain_partitions()")
    run("SELECT * FROM pgmq.list_partitions(%s)", part)
    run("SELECT pgmq.archive(%s, ARRAY(SELECT msg_id FROM pgmq.read(%s, 30, 15)))", part, part)
    run("SELECT * FROM pgmq.maintain_partitions(%s)", part)
    run("SELECT pgmq.convert_archive_partitioned(%s)", f"hqn_{tag}")
    # schedules
    sched = f"hs_{tag}"
    run(
        "SELECT pgmq.create_schedule(%s, '* * * * *', %s, %s::jsonb, '{}'::jsonb, 'Europe/Paris')",
        sched,
        q,
        m,
    )
    run("SELECT * FROM pgmq.next_ticks('*/5 * * * *', 'Europe/Paris', now(), 3)")
    run("SELECT * FROM pgmq.enqueue_due_schedules(now() + interval '3 minutes')")
    run("SELECT pgmq.run_schedule_now(%s)", sched)
    run("SELECT * FROM pgmq.enqueue_due_schedules()")
    run("SELECT * FROM pgmq.list_schedules()")
    run("SELECT pgmq.enable_schedule(%s, false)", sched)
    run("SELECT pgmq.drop_schedule(%s)", sched)
    # Celery
    cq, ex = f"hc_{tag}", f"hx_{tag}"
    session = run("SELECT pgmq.celery_open_session()")
    run("SELECT pgmq.celery_declare_queue(%s, %s, true, true, 1, 60000)", cq, cq)
    run("SELECT pgmq.celery_send(%s, %s::jsonb)", cq, m)
    run("SELECT pgmq.celery_bind(%s, 'direct', 'rk', %s)", ex, cq)
    run("SELECT pgmq.celery_bind(%s, 'topic', 'r.#', %s)", ex + "t", cq)
    run("SELECT pgmq.celery_publish(%s, 'rk', %s::jsonb)", ex, m)
    run("SELECT pgmq.celery_publish(%s, 'r.k', %s::jsonb)", ex + "t", m)
    got = [r[0] for r in run("SELECT msg_id FROM pgmq.celery_read(%s, 30, 5)", cq)]
    run("SELECT pgmq.celery_extend(%s, %s::bigint[], 30)", cq, got)
    run("SELECT pgmq.celery_release(%s, %s::bigint[])", cq, got[:1])
    run("SELECT pgmq.celery_ack(%s, %s::bigint[])", cq, got[1:])
    run("SELECT * FROM pgmq.celery_pop(%s, 1)", cq)
    run("SELECT * FROM pgmq.celery_next_visible(ARRAY[%s])", cq)
    if session:
        run("SELECT pgmq.celery_consume(%s, %s)", cq, session[0][0])
        run("SELECT pgmq.celery_cancel(%s, %s)", cq, session[0][0])
    run("SELECT pgmq.celery_unbind(%s, 'rk', %s)", ex, cq)
    run("SELECT pgmq.celery_delete_exchange(%s)", ex)
    time.sleep(0.01)
    run("SELECT pgmq.celery_cleanup()")
    # the worker's failure paths, the Tasks backend's queue, enqueue and verdict
    tq = f"hk_{tag}"
    run("SELECT pgmq._enable_task_queue(%s)", tq)
    task = str(uuid.uuid4())
    sent = run(
        "SELECT pgmq._task_enqueue(%s, %s::jsonb, '{\"priority\": 1}'::jsonb, NULL, %s::uuid,"
        " 'default', 'tests.task_funcs.noop', 1, '[]'::jsonb, '{}'::jsonb, NULL, now(), 1)",
        tq,
        m,
        task,
    )
    for _ in range(3):
        run("SELECT * FROM pgmq._read_by_priority(%s, 0, 1)", tq)
    run(
        "SELECT * FROM pgmq._task_finish_and_start(%s, %s::uuid, %s::bigint, 'SUCCESSFUL', now(),"
        " 'null'::jsonb, '[]'::jsonb, NULL, now(), 'w')",
        tq,
        task,
        sent[0][0] if sent else 0,
    )
    ids = [r[0] for r in run("SELECT pgmq.send_batch(%s, ARRAY[%s::jsonb, %s::jsonb])", q, m, m)]
    ids += [10**12] * 2
    run("SELECT pgmq._set_vt_seconds(%s, %s::bigint[], 0.5)", q, ids[:1])
    run("SELECT pgmq._hide_failed(%s, %s::bigint, 0.5, 'boom')", q, ids[0])
    run("SELECT pgmq._dead_letter(%s, %s::bigint, %s, 'boom')", q, ids[1], dlq)
    # the admin's figures, browsing and requeue
    run("SELECT * FROM pgmq._dashboard_queue_stats(%s)", q)
    run("SELECT * FROM pgmq._dashboard_stats_of(ARRAY[%s, %s])", q, qa)
    run("SELECT * FROM pgmq._dashboard_all_stats()")
    run("SELECT * FROM pgmq._dashboard_idle_queues(ARRAY[%s])", q)
    run("SELECT * FROM pgmq._dashboard_throughput(%s, interval '1 hour', interval '1 minute')", q)
    run("SELECT * FROM pgmq._dashboard_spark_stats(%s, interval '1 hour', interval '1 minute')", q)
    run("SELECT * FROM pgmq._browse_messages(%s)", q)
    run("SELECT * FROM pgmq._browse_messages(%s, true, false, 0, 'h', '1', '{}'::jsonb)", q)
    run("SELECT * FROM pgmq._dashboard_match_count(%s, false, 0, 'h', '1', '{}'::jsonb)", q)
    run(
        "SELECT * FROM pgmq._dashboard_match_batch(%s, false, 0, 'h', '1', '{}'::jsonb, 0, %s)",
        q,
        10**12,
    )
    run("SELECT * FROM pgmq._dashboard_requeue(%s, %s, %s::bigint[], true)", dlq, q, ids[1:2])
    # Spark: a consumer's claim, hold and ack; a writer's stage, committed and aborted
    run("SELECT pgmq.send_batch(%s, ARRAY[%s::jsonb, %s::jsonb])", q, m, m)
    run("SELECT * FROM pgmq.spark_claim(%s, 'c1', 30, 10, %s, 0)", q, 10**12)
    run("SELECT * FROM pgmq.spark_hold(%s, 'c1', 0, 10, 30)", q)
    run("SELECT * FROM pgmq.spark_ack(%s, 'c1', 10, 'archive')", q)
    stage = run("SELECT pgmq.spark_stage_create(%s, 'w1')", q)
    if stage:
        run("SELECT pgmq.spark_stage_commit(%s, ARRAY[]::bigint[], 1)", stage[0][0])
    stage = run("SELECT pgmq.spark_stage_create(%s)", q)
    if stage:
        run("SELECT pgmq.spark_stage_abort(%s)", stage[0][0])
    run("SELECT pgmq.spark_stage_drop_stale(interval '1 hour')")
    workflow_operations(run, q, qa, f"hqw_{tag}")
    # drops
    for queue in (q, qa, dlq, qp, qd, part, fifo, cq, tq, f"hqu_{tag}", f"hqn_{tag}"):
        run("SELECT pgmq.drop_queue(%s)", queue)


def workflow_operations(run: Owner, q: str, qa: str, qw: str) -> None:
    """Workflows (sql/55_workflows.sql): every public function, the acknowledgement trigger
    in each form, a dead-lettered step, purge, drop, cancel and retention."""

    def sent(wid: int, step: str) -> int:
        rows = run("SELECT msg_id FROM pgmq.workflow_status(%s) WHERE step = %s", wid, step)
        return rows[0][0] if rows and rows[0][0] is not None else 10**12

    spec = [
        {"step": "a", "queue": q, "message": {}},
        {"step": "b", "queue": q, "message": {}, "headers": {"h": 1}},
        {"step": "c", "queue": q, "message": {}, "after": ["a", "b"]},
        {"step": "d", "queue": qa, "message": {}},
        {"step": "e", "queue": q, "message": {}, "after": ["d"]},
    ]
    rows = run("SELECT pgmq.create_workflow(%s::jsonb, 'continue')", json.dumps(spec))
    wid = rows[0][0] if rows else 0
    run("SELECT pgmq.complete(%s, %s::bigint, '{\"r\": 1}'::jsonb)", q, sent(wid, "a"))
    run("SELECT pgmq.fail(%s, %s::bigint, '\"boom\"'::jsonb)", q, sent(wid, "b"))
    run("SELECT pgmq.delete(%s, %s::bigint[])", q, [sent(wid, "c")])
    for _ in range(3):
        run("SELECT * FROM pgmq.read(%s, 0, 10)", qa)  # read again: to the dead letters
    run("SELECT * FROM pgmq.pop(%s, 100)", q)
    run("SELECT * FROM pgmq.workflow_status(%s)", wid)
    run("SELECT * FROM pgmq._workflow_graph(%s)", wid)
    run("SELECT * FROM pgmq.list_workflows()")
    run("SELECT * FROM pgmq.list_workflows('done', 10, 10000000)")
    run("SELECT pgmq.cancel_workflow(%s)", wid)
    run("SELECT pgmq.create(%s)", qw)
    chain = [
        {"step": "x", "queue": qw, "message": {}},
        {"step": "y", "queue": qw, "message": {}, "after": ["x"]},
    ]
    for _ in range(2):
        rows = run("SELECT pgmq.create_workflow(%s::jsonb)", json.dumps(chain))
    run("SELECT pgmq.cancel_workflow(%s)", rows[0][0] if rows else 0)
    run("SELECT pgmq.create_workflow(%s::jsonb)", json.dumps(chain))
    run("SELECT pgmq.purge_queue(%s)", qw)
    run("SELECT pgmq.create_workflow(%s::jsonb, 'continue')", json.dumps(chain))
    run("SELECT pgmq.drop_queue(%s)", qw)
    run("SELECT pgmq._workflow_retention(0, 100)")


def manager_operations(run: Owner, tag: str) -> None:
    """The manager with prepared statements on: its own kept statements and queries.sql."""
    manager = QueueManager()
    connection.ensure_connection()
    pg = connection.connection
    pg.prepare_threshold = 1
    queue = f"hm_{tag}"
    try:
        manager.create_queue(queue)
        for _ in range(4):
            ids = manager.send_batch(queue, [{"n": n} for n in range(4)])
            manager.send(queue, {"n": 9})
            manager.read(queue, vt=0, qty=2)
            manager.set_vt(queue, ids[0], 0)
            manager.archive(queue, ids[:2])
            manager.delete(queue, ids[2])
            manager.pop(queue, 1)
            manager.metrics(queue)
        manager.set_queue_attributes(queue, max_in_flight=10, priorities=True)
        for _ in range(3):
            manager.send(queue, {"n": 1})
            manager.read(queue, vt=0, qty=2)
            manager.pop(queue, 1)
        kept = pg.execute(
            "SELECT pg_catalog.count(*) FROM pg_catalog.pg_prepared_statements"
            " WHERE statement LIKE %s",
            [f"%pgmq.q_{queue} %"],
        ).fetchone()
        if kept == (0,):
            run.errors.append("manager: none of the queue's own statements ran prepared")
        manager.enforce_retention()
        manager.enqueue_due_schedules()
        manager.build_pending_indexes()
        manager.drop_queue(queue)
    except Exception as exc:  # recorded: the count below says whether a planted body ran
        run.errors.append(f"manager: {exc!r}")
    finally:
        pg.prepare_threshold = None


def test_no_planted_overload_runs_for_the_owner(hostile: Planted, pg_connect) -> None:
    assert hostile.functions > 500 and hostile.operators > 100, hostile
    for expected in ("lower", "format", "send", "_claim_limits", "clock_timestamp"):
        assert expected in hostile.names
    admin = pg_connect()
    admin.execute("SET search_path = pg_catalog, pg_temp")
    owner = pg_connect()
    owner.execute('SET search_path = "$user", public')
    run = Owner(owner)
    tag = uuid.uuid4().hex[:8]
    message_operations(run, tag)
    connection.ensure_connection()
    connection.connection.execute('SET search_path = "$user", public')
    connection.connection.add_notice_handler(run._notice)
    try:
        manager_operations(run, tag)
    finally:
        connection.connection.remove_notice_handler(run._notice)
    count = hijacks(admin, hostile)
    report = "\n".join([*sorted(set(run.warnings)), *run.errors])
    assert (count, sorted(set(run.warnings)), run.errors) == (0, [], []), report


def test_pg_catalog_last_is_not_supported(pg_connect) -> None:
    """With pg_catalog named after public, an identical signature in public wins: even the
    caller's own text comparison runs the planted operator (so no body can defend that)."""
    admin = pg_connect()
    admin.execute("SET search_path = pg_catalog, pg_temp")
    with admin.transaction(force_rollback=True):
        admin.execute(
            "CREATE FUNCTION public.hostile_texteq(text, text) RETURNS boolean LANGUAGE sql"
            " AS 'SELECT false'"
        )
        admin.execute(
            "CREATE OPERATOR public.= (LEFTARG = text, RIGHTARG = text,"
            " FUNCTION = public.hostile_texteq)"
        )
        admin.execute("SET LOCAL search_path = public, pg_catalog")
        assert admin.execute("SELECT 'a'::text = 'a'::text").fetchone() == (False,)
        admin.execute('SET LOCAL search_path = "$user", public')
        assert admin.execute("SELECT 'a'::text = 'a'::text").fetchone() == (True,)
