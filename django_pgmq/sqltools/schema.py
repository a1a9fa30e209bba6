"""The ``pgmq`` schema's signature, read from pg_catalog, and the differences of two.

Two databases whose signatures are equal have the same functions (signature, result,
attributes, body and whether PUBLIC may run them), tables (columns, defaults, storage,
partitioning), indexes, constraints, triggers, sequences, composite types, views and
comments in ``pgmq``. The upgrade test and ``python -m django_pgmq.sqltools.migrate`` compare
installs with it.
"""

from __future__ import annotations

import difflib
import re

import psycopg

Signature = dict[str, str]

# The last line of a function's entry: whether PUBLIC may run it (a REVOKE/GRANT apart).
PUBLIC_EXECUTE = "\n-- executable by PUBLIC: "

# Each query yields (key, definition) rows for the objects of schema pgmq.
_QUERIES = {
    "schema": """
        SELECT 'schema pgmq', coalesce(obj_description(n.oid, 'pg_namespace'), '')
        FROM pg_namespace n WHERE n.nspname = 'pgmq'
    """,
    "function": """
        SELECT format('function pgmq.%s(%s)', p.proname, pg_get_function_identity_arguments(p.oid)),
               pg_get_functiondef(p.oid)
               || E'\\n-- comment: ' || coalesce(obj_description(p.oid, 'pg_proc'), '')
               || E'\\n-- executable by PUBLIC: '
               || has_function_privilege('public', p.oid, 'EXECUTE')::text
        FROM pg_proc p
        WHERE p.pronamespace = 'pgmq'::regnamespace AND p.prokind IN ('f', 'p')
    """,
    "relation": """
        SELECT format('%s pgmq.%s',
                      CASE c.relkind WHEN 'r' THEN 'table' WHEN 'p' THEN 'table'
                                     WHEN 'v' THEN 'view' WHEN 'm' THEN 'view'
                                     WHEN 'c' THEN 'type' WHEN 'f' THEN 'table' END,
                      c.relname),
               concat_ws(E'\\n',
                   'kind ' || c.relkind::text || ' persistence ' || c.relpersistence::text,
                   'options ' || coalesce(array_to_string(c.reloptions, ','), ''),
                   'partition key ' || coalesce(pg_get_partkeydef(c.oid), ''),
                   'partition of ' || coalesce((SELECT i.inhparent::regclass::text
                                                FROM pg_inherits i
                                                WHERE i.inhrelid = c.oid), '')
                       || ' ' || coalesce(pg_get_expr(c.relpartbound, c.oid), ''),
                   'view ' || coalesce(pg_get_viewdef(c.oid), ''),
                   'comment ' || coalesce(obj_description(c.oid, 'pg_class'), ''),
                   (SELECT string_agg(
                        format('column %s %s%s%s%s%s%s', a.attname,
                               format_type(a.atttypid, a.atttypmod),
                               CASE WHEN a.attnotnull THEN ' not null' ELSE '' END,
                               CASE WHEN a.attidentity <> ''
                                    THEN ' identity ' || a.attidentity::text ELSE '' END,
                               CASE WHEN a.attgenerated <> '' THEN ' generated' ELSE '' END,
                               coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), ''),
                               coalesce(' comment ' || col_description(c.oid, a.attnum), '')),
                        E'\\n' ORDER BY a.attnum)
                    FROM pg_attribute a
                    LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
                    WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped))
        FROM pg_class c
        WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relkind IN ('r', 'p', 'v', 'm', 'c', 'f')
    """,
    "index": """
        SELECT format('index pgmq.%s', c.relname), pg_get_indexdef(c.oid)
        FROM pg_class c
        WHERE c.relnamespace = 'pgmq'::regnamespace AND c.relkind IN ('i', 'I')
    """,
    "sequence": """
        SELECT format('sequence pgmq.%s', c.relname),
               format('%s start %s increment %s min %s max %s cache %s cycle %s persistence %s',
                      format_type(s.seqtypid, NULL), s.seqstart, s.seqincrement, s.seqmin,
                      s.seqmax, s.seqcache, s.seqcycle, c.relpersistence)
        FROM pg_class c JOIN pg_sequence s ON s.seqrelid = c.oid
        WHERE c.relnamespace = 'pgmq'::regnamespace
    """,
    "constraint": """
        SELECT format('constraint %s on pgmq.%s', con.conname, c.relname),
               pg_get_constraintdef(con.oid)
        FROM pg_constraint con JOIN pg_class c ON c.oid = con.conrelid
        WHERE c.relnamespace = 'pgmq'::regnamespace
    """,
    "trigger": """
        SELECT format('trigger %s on pgmq.%s', t.tgname, c.relname),
               pg_get_triggerdef(t.oid) || ' enabled ' || t.tgenabled::text
               || E'\\n-- comment: ' || coalesce(obj_description(t.oid, 'pg_trigger'), '')
        FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
        WHERE c.relnamespace = 'pgmq'::regnamespace AND NOT t.tgisinternal
    """,
    "type": """
        SELECT format('type pgmq.%s', t.typname),
               t.typtype::text || ' ' || coalesce(format_type(t.typbasetype, t.typtypmod), '')
               || ' ' || coalesce((SELECT string_agg(e.enumlabel, ',' ORDER BY e.enumsortorder)
                                  FROM pg_enum e WHERE e.enumtypid = t.oid), '')
        FROM pg_type t
        WHERE t.typnamespace = 'pgmq'::regnamespace AND t.typtype IN ('d', 'e')
    """,
}


# Generated bodies (a queue's access function) name their table's oid as a literal;
# oids differ between two equal databases, so they are compared as the table's name.
_RELATION_OIDS = (
    "SELECT c.oid::text, c.relname FROM pg_class c WHERE c.relnamespace = 'pgmq'::regnamespace"
)
_OID_LITERAL = re.compile(r"'(\d+)'")


def signature(conn: psycopg.Connection) -> Signature:
    """Every object of schema ``pgmq`` in ``conn``'s database, keyed by kind and name."""
    oids: dict[str, str] = dict(conn.execute(_RELATION_OIDS).fetchall())

    def named(match: re.Match[str]) -> str:
        oid = match.group(1)
        return f"'<oid of pgmq.{oids[oid]}>'" if oid in oids else match.group(0)

    found: Signature = {}
    for query in _QUERIES.values():
        for key, definition in conn.execute(query):
            found[key] = _OID_LITERAL.sub(named, definition)
    return found


def differences(expected: Signature, actual: Signature) -> list[str]:
    """One line per object that is missing, extra or defined otherwise, with a short diff."""
    lines = []
    for key in sorted(expected.keys() | actual.keys()):
        if key not in actual:
            lines.append(f"missing: {key}")
        elif key not in expected:
            lines.append(f"unexpected: {key}")
        elif expected[key] != actual[key]:
            diff = difflib.unified_diff(
                expected[key].splitlines(), actual[key].splitlines(), lineterm="", n=1
            )
            detail = "\n    ".join(list(diff)[2:12])
            lines.append(f"differs: {key}\n    {detail}")
    return lines
