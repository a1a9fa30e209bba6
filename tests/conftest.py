"""Shared fixtures: a real PostgreSQL (embedded by default, DATABASE_URL otherwise)."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterator

import psycopg
import pytest
from django.db import connection
from psycopg.conninfo import make_conninfo

from django_pgmq import QueueManager
from django_pgmq.internal import InternalManager
from tests.scratch import Scratch, scratch_database


@pytest.fixture
def pg_dsn(django_db_setup, django_db_blocker) -> str:
    """A libpq connection string for the test database."""
    with django_db_blocker.unblock():
        params = connection.get_connection_params()
    keep = {"host", "port", "user", "password", "dbname"}
    return make_conninfo(**{k: v for k, v in params.items() if k in keep and v not in (None, "")})


@pytest.fixture
def pg_connect(pg_dsn) -> Iterator[Callable[..., psycopg.Connection]]:
    """Open extra autocommit psycopg connections to the test database; closed afterwards."""
    opened: list[psycopg.Connection] = []

    def connect(**kwargs) -> psycopg.Connection:
        conn = psycopg.connect(pg_dsn, autocommit=kwargs.pop("autocommit", True), **kwargs)
        opened.append(conn)
        return conn

    yield connect
    for conn in opened:
        conn.close()


@pytest.fixture
def tx(db) -> psycopg.Connection:
    """Django's own psycopg connection, inside the test's transaction (rolled back after)."""
    connection.ensure_connection()
    return connection.connection


@pytest.fixture
def tx_queue(tx: psycopg.Connection, queue_name: str) -> str:
    """A queue created inside the test's transaction: the rollback removes it, no flush."""
    tx.execute("SELECT pgmq.create(%s)", [queue_name])
    return queue_name


@pytest.fixture
def queue_name() -> str:
    """A fresh queue name, unique to the test."""
    return f"t_{uuid.uuid4().hex[:16]}"


@pytest.fixture
def manager(transactional_db) -> QueueManager:
    return QueueManager()


@pytest.fixture
def internal(transactional_db) -> InternalManager:
    """The internal layer (what the worker and the admin call), on the default alias."""
    return InternalManager()


@pytest.fixture
def queue(manager: QueueManager, queue_name: str) -> Iterator[str]:
    """A committed queue, dropped after the test."""
    manager.create_queue(queue_name)
    yield queue_name
    manager.drop_queue(queue_name)


@pytest.fixture(scope="session")
def test_database_url(django_db_setup, django_db_blocker) -> str:
    """A DATABASE_URL for the test database, for subprocesses (manage.py, workers)."""
    from urllib.parse import quote

    with django_db_blocker.unblock():
        s = connection.settings_dict
    host = quote(s["HOST"] or "localhost", safe="")
    password = f":{quote(s['PASSWORD'], safe='')}" if s.get("PASSWORD") else ""
    port = f":{s['PORT']}" if s.get("PORT") else ""
    return f"postgres://{quote(s['USER'], safe='')}{password}@{host}{port}/{s['NAME']}"


@pytest.fixture
def subprocess_env(test_database_url) -> dict[str, str]:
    """Environment for a subprocess of the example project that uses the test database."""
    import os

    env = dict(os.environ)
    env.update(
        DATABASE_URL=test_database_url,
        DJANGO_SETTINGS_MODULE="example_project.settings",
        PYTHONUNBUFFERED="1",
    )
    return env


@pytest.fixture
def scratch(pg_dsn, subprocess_env) -> Iterator[Scratch]:
    """An empty database beside the test database, reachable by DATABASE_URL."""
    with scratch_database(pg_dsn, subprocess_env) as made:
        yield made


@pytest.fixture
def other_scratch(pg_dsn, subprocess_env) -> Iterator[Scratch]:
    """A second empty database, for tests that compare two installs."""
    with scratch_database(pg_dsn, subprocess_env) as made:
        yield made


@pytest.fixture
def app_role(pg_connect, pg_dsn, transactional_db) -> Iterator[tuple[str, str]]:
    """An application role (LOGIN, not superuser) granted by pgmq.grant_app_role in the
    test database: (its name, a libpq DSN that connects as it). Dropped afterwards."""
    from psycopg import sql

    name, password = f"pgmq_app_{uuid.uuid4().hex[:8]}", uuid.uuid4().hex
    admin = pg_connect()
    admin.execute(
        sql.SQL("CREATE ROLE {} LOGIN NOSUPERUSER PASSWORD {}").format(
            sql.Identifier(name), sql.Literal(password)
        )
    )
    admin.execute("SELECT pgmq.grant_app_role(%s)", [name])
    try:
        yield name, make_conninfo(pg_dsn, user=name, password=password)
    finally:
        admin.execute("SELECT pgmq.revoke_app_role(%s)", [name])
        admin.execute(sql.SQL("DROP OWNED BY {} CASCADE").format(sql.Identifier(name)))
        admin.execute(sql.SQL("DROP ROLE {}").format(sql.Identifier(name)))
