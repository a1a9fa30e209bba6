"""Internal: what the worker needs beyond the user API (sql/70_worker.sql)."""

from __future__ import annotations

from collections.abc import Iterable

from ..errors import (
    InvalidArgument,
)
from ..manager.plumbing import (
    MAX_INT4,
    MAX_QTY,
    Base,
    _check_int,
    _id_array,
    _ids,
)
from ..manager.workflow_ops import result_json
from ..names import table_name, validate_queue_name
from ..records import Message


class WorkerOps(Base):
    """What the worker needs beyond the public API (sql/70_worker.sql)."""

    # -- worker (sql/70_worker.sql, sql/40_notify.sql) -----------------------

    def rearm_notify(self, queue: str) -> None:
        """Let the next insert into ``queue`` notify at once: the worker found it empty.

        A throttled trigger sends at most one notification per window; an idle worker
        that waited out the window would see a trickle of messages late. Re-armed, each
        message that reaches an idle worker's empty queue wakes it.
        """
        validate_queue_name(queue)
        self._fetch("rearm_notify", {"queue": queue}, queue)

    def workflow_settle(self, queue: str, msg_id: int, result: object) -> None:
        """Record a handler's return value as the result of the workflow step whose message
        ``msg_id`` is (sql/57_workflow_settle.sql); the acknowledgement then finishes the step
        with it. Locks the message until the end of the transaction."""
        validate_queue_name(queue)
        params = {"queue": queue, "msg_id": msg_id, "result": result_json(result)}
        self._fetch("workflow_settle", params, queue)

    def set_vt_seconds(
        self, queue: str, msg_ids: Iterable[int], seconds: float, *, unread: bool = False
    ) -> list[int]:
        """Hide messages for ``seconds`` (fractions allowed); returns the ids moved.

        The worker's heartbeat and release (a failed message's retry backoff
        is `hide_failed`). Rows another transaction is acknowledging are
        skipped, not waited for; ``unread``
        also takes back the read of messages handed back before their handler ran.
        """
        validate_queue_name(queue)
        ids, _ = _ids(list(msg_ids))
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise InvalidArgument(f"seconds must be a number, got {seconds!r}")
        if not 0 <= seconds <= MAX_INT4:
            raise InvalidArgument(f"seconds must be between 0 and {MAX_INT4}, got {seconds}")
        params = {
            "queue": queue,
            "ids": _id_array(ids),
            "seconds": float(seconds),
            "unread": bool(unread),
        }
        return sorted(row[0] for row in self._fetch("set_vt_seconds", params, queue))

    def hide_failed(self, queue: str, msg_id: int, seconds: float, error: str) -> bool:
        """Hide a failed message for ``seconds`` and append ``error`` to its headers.

        The headers' ``attempt_errors`` list keeps one entry per failed attempt
        (``attempt`` = read_ct, ``at``, ``error``), the newest 20. False when the
        message was gone or locked by another transaction.
        """
        validate_queue_name(queue)
        [msg], _ = _ids(msg_id)
        if isinstance(seconds, bool) or not isinstance(seconds, int | float):
            raise InvalidArgument(f"seconds must be a number, got {seconds!r}")
        if not 0 <= seconds <= MAX_INT4:
            raise InvalidArgument(f"seconds must be between 0 and {MAX_INT4}, got {seconds}")
        params = {"queue": queue, "id": msg, "seconds": float(seconds), "error": error}
        return self._fetch("hide_failed", params, queue)[0][0] is not None

    def dead_letter(
        self, queue: str, msg_id: int, dead_letter_queue: str, error: str | None = None
    ) -> int | None:
        """Move a message to ``dead_letter_queue`` (created on demand) in one transaction.

        Its headers gain ``dead_letter``: source queue, msg_id, read_ct, enqueue and
        dead-letter times, ``error``. Returns its new id, or None if it was gone.
        """
        validate_queue_name(queue)
        validate_queue_name(dead_letter_queue)
        [msg], _ = _ids(msg_id)
        params = {"queue": queue, "id": msg, "dlq": dead_letter_queue, "error": error}
        return self._fetch("dead_letter", params, queue)[0][0]

    def lock_messages(self, queue: str, msg_ids: Iterable[int]) -> list[int]:
        """Lock messages until the end of the current transaction; the ids still there.

        The worker's atomic handlers hold their messages this way: nobody else
        can archive, delete or read them meanwhile (readers skip locked rows).
        """
        validate_queue_name(queue)
        ids, _ = _ids(list(msg_ids))
        rows = self._fetch(
            "lock_messages", {"ids": _id_array(ids)}, queue, {"queue": table_name(queue)}
        )
        return [row[0] for row in rows]

    def acknowledge_and_read(
        self,
        queue: str,
        msg_ids: Iterable[int],
        *,
        delete: bool = False,
        vt: int,
        qty: int,
        commit: bool = False,
    ) -> list[Message]:
        """Archive (or delete) messages, then read up to ``qty`` more, in one statement.

        The worker's atomic handlers: a batch's acknowledgement and the read of
        the next batch share one round trip (and the caller's transaction).
        ``commit`` also commits that transaction in the same round trip: only for
        the last statement of an outermost ``transaction.atomic()`` block.
        """
        validate_queue_name(queue)
        ids, _ = _ids(list(msg_ids))
        params = {
            "queue": queue,
            "ids": _id_array(ids),
            "vt": _check_int("vt", vt, 0),
            "qty": _check_int("qty", qty, 1, MAX_QTY),
        }
        query = "acknowledge_and_read_delete" if delete else "acknowledge_and_read_archive"
        return self._fetch_messages(query, params, queue, commit=commit)
