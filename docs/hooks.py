"""MkDocs hooks: pages generated at build time from the code, so they never go stale.

``<!-- generated: commands -->`` in a page becomes the command reference (each
management command's own ``--help``, via ``docs/gen_commands.py`` in a subprocess with
a database URL that is never connected to); ``<!-- generated: sql-functions -->``
becomes the table of every public function in ``django_pgmq/sql/``, with its signature
and whether pgmq 1.13 has the same one; ``<!-- generated: module-functions -->`` and
``<!-- generated: manager-members -->`` become the module-level functions' table and the
documented `QueueManager` methods, from the one declaration in ``django_pgmq/api.py``;
``<!-- generated: attributes -->`` becomes the table of the queue attributes, from the
module generated from their SQL declaration (``django_pgmq/attributes_declared.py``).
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
SQL_DIR = ROOT / "django_pgmq" / "sql"

# pgmq 1.13's public functions, as name(argument types); tests/unit/test_docs.py checks
# this list against the pgmq.sql that the `pgmq` wheel (a dev dependency) bundles.
PGMQ_113 = frozenset(
    (
        "acquire_queue_lock(text)",
        "archive(text,bigint)",
        "archive(text,bigint[])",
        "bind_topic(text,text)",
        "convert_archive_partitioned(text,text,text,integer)",
        "create(text)",
        "create_fifo_index(text)",
        "create_fifo_indexes_all()",
        "create_non_partitioned(text)",
        "create_partitioned(text,text,text,integer)",
        "create_unlogged(text)",
        "delete(text,bigint)",
        "delete(text,bigint[])",
        "detach_archive(text)",
        "disable_notify_insert(text)",
        "drop_queue(text)",
        "drop_queue(text,boolean)",
        "enable_notify_insert(text,integer)",
        "format_table_name(text,text)",
        "list_notify_insert_throttles()",
        "list_queues()",
        "list_topic_bindings()",
        "list_topic_bindings(text)",
        "metrics(text)",
        "metrics_all()",
        "notify_queue_listeners()",
        "pop(text,integer)",
        "purge_queue(text)",
        "read(text,integer,integer,jsonb)",
        "read_grouped(text,integer,integer)",
        "read_grouped_head(text,integer,integer)",
        "read_grouped_head_with_poll(text,integer,integer,integer,integer)",
        "read_grouped_rr(text,integer,integer)",
        "read_grouped_rr_with_poll(text,integer,integer,integer,integer)",
        "read_grouped_with_poll(text,integer,integer,integer,integer)",
        "read_with_poll(text,integer,integer,integer,integer,jsonb)",
        "send(text,jsonb)",
        "send(text,jsonb,integer)",
        "send(text,jsonb,timestamptz)",
        "send(text,jsonb,jsonb)",
        "send(text,jsonb,jsonb,integer)",
        "send(text,jsonb,jsonb,timestamptz)",
        "send_batch(text,jsonb[])",
        "send_batch(text,jsonb[],integer)",
        "send_batch(text,jsonb[],timestamptz)",
        "send_batch(text,jsonb[],jsonb[])",
        "send_batch(text,jsonb[],jsonb[],integer)",
        "send_batch(text,jsonb[],jsonb[],timestamptz)",
        "send_batch_topic(text,jsonb[])",
        "send_batch_topic(text,jsonb[],integer)",
        "send_batch_topic(text,jsonb[],timestamptz)",
        "send_batch_topic(text,jsonb[],jsonb[])",
        "send_batch_topic(text,jsonb[],jsonb[],integer)",
        "send_batch_topic(text,jsonb[],jsonb[],timestamptz)",
        "send_topic(text,jsonb)",
        "send_topic(text,jsonb,integer)",
        "send_topic(text,jsonb,jsonb,integer)",
        "set_vt(text,bigint,integer)",
        "set_vt(text,bigint,timestamptz)",
        "set_vt(text,bigint[],integer)",
        "set_vt(text,bigint[],timestamptz)",
        "test_routing(text)",
        "unbind_topic(text,text)",
        "update_notify_insert(text,integer)",
        "validate_queue_name(text)",
        "validate_routing_key(text)",
        "validate_topic_pattern(text)",
    )
)

# What each SQL file holds, as a heading of the generated table.
SQL_FILE_TITLES = {
    "00_schema": "Schema",
    "05_names": "Queue names",
    "10_queues": "Queues",
    "15_queue_ops": "Queue access (internal routing)",
    "20_messages": "Messages",
    "22_index_builds": "Per-queue indexes, built concurrently",
    "25_attributes": "Queue attributes",
    "30_metrics": "Metrics",
    "40_notify": "Insert notifications",
    "45_partitions": "Partitioned queues",
    "50_fifo": "FIFO groups",
    "55_workflows": "Workflows",
    "56_workflow_progress": "Workflows",
    "57_workflow_settle": "Workflows",
    "60_topics": "Topics",
    "70_worker": "Worker",
    "71_worker_failures": "Worker failures",
    "75_tasks": "Django Tasks",
    "80_celery": "Celery transport (called by the transport, not by you)",
    "90_dashboard": "Admin dashboard",
    "91_dashboard_stats": "Admin dashboard",
    "92_dashboard_bulk": "Admin dashboard",
    "95_spark": "Spark data source (called by the source, not by you)",
    "99_roles": "Roles",
}

_FUNCTION = re.compile(r'CREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+pgmq\."?(\w+)"?\s*\(', re.I)
_RETURNS = re.compile(
    r"\s*RETURNS\s+(.*?)\s+(?:LANGUAGE|AS|VOLATILE|STABLE|IMMUTABLE|SET|SECURITY|STRICT|"
    r"PARALLEL|CALLED)\b",
    re.I | re.S,
)
_TYPE_ALIASES = {
    "timestamp with time zone": "timestamptz",
    "int": "integer",
    "int4": "integer",
    "int8": "bigint",
    "bool": "boolean",
}


def sql_functions(text: str) -> list[tuple[str, str, str]]:
    """(name, arguments, result) of each ``CREATE FUNCTION pgmq.*`` in an SQL text."""
    text = re.sub(r"--[^\n]*", "", text)
    found = []
    for match in _FUNCTION.finditer(text):
        depth, end = 1, match.end()
        while depth:
            depth += {"(": 1, ")": -1}.get(text[end], 0)
            end += 1
        arguments = " ".join(text[match.end() : end - 1].split())
        returns = _RETURNS.match(text, end)
        result = " ".join(returns.group(1).split()) if returns else ""
        found.append((match.group(1), arguments, result))
    return found


def _argument_type(argument: str) -> str:
    """The type of one argument declaration ``name type [DEFAULT ...]``, normalised."""
    declaration = re.split(r"\s+DEFAULT\s+|\s*=\s*", argument.strip(), flags=re.I)[0]
    words = declaration.split()
    if words and words[0].upper() in ("IN", "OUT", "INOUT", "VARIADIC"):
        words = words[1:]
    kind = " ".join(words[1:]).lower()
    return _TYPE_ALIASES.get(kind, kind)


def signature_key(name: str, arguments: str) -> str:
    """``name(type,type)``: how two definitions of one function are told apart."""
    parts = [a for a in re.split(r",(?![^(]*\))", arguments) if a.strip()]
    return f"{name}({','.join(_argument_type(a) for a in parts)})"


def public_sql_functions() -> list[tuple[str, str, str, str]]:
    """(file stem, name, arguments, result) of each public function, first definition only."""
    seen: set[str] = set()
    rows = []
    for path in sorted(SQL_DIR.glob("[0-9]*.sql")):
        for name, arguments, result in sql_functions(path.read_text()):
            key = signature_key(name, arguments)
            if name.startswith("_") or key in seen:
                continue
            seen.add(key)
            rows.append((path.stem, name, arguments, result))
    return rows


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_sql_functions() -> str:
    """The generated table: every public function, grouped by the SQL file defining it."""
    lines: list[str] = []
    title = None
    for stem, name, arguments, result in public_sql_functions():
        heading = SQL_FILE_TITLES.get(stem, stem)
        if heading != title:
            title = heading
            lines += ["", f"### {heading}", "", f"From `django_pgmq/sql/{stem}.sql`.", ""]
            lines += ["| function | returns | pgmq 1.13 |", "|---|---|---|"]
        compatible = signature_key(name, arguments) in PGMQ_113
        note = "compatible" if compatible else "**ours**"
        lines.append(f"| `pgmq.{name}({_cell(arguments)})` | `{_cell(result)}` | {note} |")
    return "\n".join(lines).strip() + "\n"


def render_commands() -> str:
    """The command reference, from ``docs/gen_commands.py`` in a clean subprocess."""
    env = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "docs" / "gen_commands.py")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise RuntimeError(f"docs/gen_commands.py failed:\n{done.stderr}")
    return done.stdout


def _api() -> ModuleType:
    """``django_pgmq/api.py`` loaded on its own (standard library only, no Django)."""
    spec = importlib.util.spec_from_file_location("_pgmq_api", ROOT / "django_pgmq" / "api.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def render_module_functions() -> str:
    """The table of module-level functions and their async twins."""
    api = _api()
    rows = [f"| `{name}` | `{api.twin(name)}` |" for name in api.MODULE_FUNCTIONS]
    return "\n".join(["| module-level function | async twin |", "|---|---|", *rows]) + "\n"


def render_manager_members() -> str:
    """The mkdocstrings block documenting every public `QueueManager` method."""
    members = "".join(f"        - {name}\n" for name in _api().PUBLIC_METHODS)
    return (
        "::: django_pgmq.manager.QueueManager\n    options:\n      inherited_members: true\n"
        "      members_order: alphabetical\n      members:\n" + members
    )


def render_attributes() -> str:
    """The table of the declared queue attributes (``sqltools.attributes`` renders it)."""
    from django_pgmq.attributes_declared import DECLARED
    from django_pgmq.sqltools.attributes import render_docs_table

    return render_docs_table(DECLARED)


GENERATORS = {
    "<!-- generated: attributes -->": render_attributes,
    "<!-- generated: module-functions -->": render_module_functions,
    "<!-- generated: manager-members -->": render_manager_members,
    "<!-- generated: commands -->": render_commands,
    "<!-- generated: sql-functions -->": render_sql_functions,
}


def on_page_markdown(markdown: str, **kwargs: object) -> str:
    """Replace each generation marker in a page by what it stands for."""
    for marker, generate in GENERATORS.items():
        if marker in markdown:
            markdown = markdown.replace(marker, generate())
    return markdown
