"""What a producer or consumer process calls: one client per process, one connection each.

``SqlClient`` calls the pgmq SQL API (django-pgmq's or pgmq's functions: same
statements) or the raw table's static statements; ``ManagerClient`` goes
through django-pgmq's Python ``QueueManager`` on Django's connection.
"""

from __future__ import annotations

import json
import os
from typing import Any, Protocol

import psycopg
from psycopg import sql

from .sqlfile import statement, statements
from .stores import QUEUE

VT = 30


def payload(size: int) -> dict[str, str]:
    """A message whose JSON text is ``size`` bytes (at least 9)."""
    return {"p": "x" * max(0, size - len('{"p": ""}'))}


class Client(Protocol):
    def send(self, count: int) -> int: ...
    def send_notify(self) -> int: ...
    def read(self, qty: int) -> list[int]: ...
    def ack(self, ids: list[int], mode: str) -> int: ...
    def close(self) -> None: ...


class SqlClient:
    """Statements of ``fn.sql`` (the SQL API) or ``raw.sql`` (the bare table) on psycopg."""

    def __init__(self, conninfo: dict[str, Any], sqlfile: str, size: int, channel: str) -> None:
        self.conn = psycopg.connect(**conninfo, autocommit=True)
        self.sqlfile = sqlfile
        self.text = {
            name: statement(sqlfile, name).as_string(self.conn) for name in statements(sqlfile)
        }
        self.message = json.dumps(payload(size))
        self.channel = channel

    def _rows(self, name: str, params: dict[str, Any]) -> list[tuple]:
        return self.conn.execute(self.text[name], params).fetchall()

    def send(self, count: int) -> int:
        if count == 1:
            return len(self._rows("send", {"queue": QUEUE, "msg": self.message}))
        return len(self._rows("send_batch", {"queue": QUEUE, "msgs": [self.message] * count}))

    def send_notify(self) -> int:
        """One message whose commit notifies (a trigger for the SQL API, pg_notify for raw)."""
        name = "send_notify" if "send_notify" in self.text else "send"
        return len(self._rows(name, {"queue": QUEUE, "msg": self.message}))

    def read(self, qty: int) -> list[int]:
        return [row[0] for row in self._rows("read", {"queue": QUEUE, "vt": VT, "qty": qty})]

    def ack(self, ids: list[int], mode: str) -> int:
        if len(ids) == 1 and f"{mode}_one" in self.text:
            return int(bool(self._rows(f"{mode}_one", {"queue": QUEUE, "id": ids[0]})[0][0]))
        return len(self._rows(mode, {"queue": QUEUE, "ids": ids}))

    def listen(self) -> None:
        """LISTEN on the queue's insert channel (notifications come on this connection)."""
        self.conn.execute(sql.SQL("LISTEN {}").format(sql.Identifier(self.channel)))

    def close(self) -> None:
        self.conn.close()


class ManagerClient:
    """django-pgmq's QueueManager (Django must be set up on the ``ours`` database);
    ``prepared`` turns psycopg's prepared statements on, as a project does in its
    ``OPTIONS`` (Django leaves them off)."""

    def __init__(self, app: str, size: int, prepared: bool = False) -> None:
        os.environ["PGAPPNAME"] = app  # libpq picks it up for Django's connection
        from django.db import connection

        from django_pgmq import QueueManager

        if prepared:  # read when this process connects
            connection.settings_dict["OPTIONS"] = {
                **connection.settings_dict.get("OPTIONS", {}),
                "prepare_threshold": 5,
            }

        self.manager = QueueManager()
        self.message = payload(size)
        # connected before the start barrier, as the SQL clients are: a read window's
        # server CPU is that of the backends there at its start
        connection.ensure_connection()

    def send(self, count: int) -> int:
        if count == 1:
            self.manager.send(QUEUE, self.message)
            return 1
        return len(self.manager.send_batch(QUEUE, [self.message] * count))

    def send_notify(self) -> int:
        return self.send(1)

    def read(self, qty: int) -> list[int]:
        return [m.msg_id for m in self.manager.read(QUEUE, vt=VT, qty=qty)]

    def ack(self, ids: list[int], mode: str) -> int:
        target = ids[0] if len(ids) == 1 else ids
        done = getattr(self.manager, mode)(QUEUE, target)
        return int(done) if isinstance(done, bool) else len(done)

    def close(self) -> None:
        from django.db import connections

        connections.close_all()
