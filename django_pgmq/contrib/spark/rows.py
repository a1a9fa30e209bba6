"""How a DataFrame's rows become messages: the columns ``message``, ``headers`` and ``delay``.

A ``message`` column of strings is taken as JSON text (make it in Spark with
``to_json(struct(...))``: fastest, the JVM does the work); a ``message`` column
of another type is converted to JSON here; without a ``message`` column the
whole row (minus ``headers`` and ``delay``) is the message. ``headers`` is JSON
text or a map/struct; ``delay`` is seconds (a number) or the time (a timestamp)
at which the message becomes visible.
"""

from __future__ import annotations

import base64
import io
import json
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
from pyarrow import csv
from pyspark.sql.types import NumericType, StringType, StructType, TimestampType

from ...errors import InvalidArgument, InvalidPayload

_TIMESTAMP = pa.timestamp("us", tz="UTC")
_UTC_NAIVE = pa.timestamp("us")  # wall-clock UTC
_SPECIAL = ("message", "headers", "delay")


def _default(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return float(value)
    if isinstance(value, bytes | bytearray):
        return base64.b64encode(value).decode()
    raise TypeError(f"{type(value).__name__} is not JSON-serializable")


def _dumps(value: Any) -> str:
    return json.dumps(value, default=_default, separators=(",", ":"), allow_nan=False)


@dataclass(frozen=True)
class RowLayout:
    """Which input columns hold the message, headers and delay, and in what form."""

    message: str | None
    message_is_text: bool
    headers: str | None
    headers_is_text: bool
    delay: str | None
    delay_is_time: bool
    payload: tuple[str, ...]

    @classmethod
    def of(cls, schema: StructType, queue: str) -> RowLayout:
        """The layout of a DataFrame schema, or an error naming the column at fault."""
        by_name = {f.name.lower(): f for f in schema.fields}
        message, headers, delay = (by_name.get(n) for n in _SPECIAL)
        if delay is not None and not isinstance(delay.dataType, NumericType | TimestampType):
            raise InvalidArgument(
                f'queue "{queue}": column "delay" must be seconds (a number) or a timestamp, '
                f"got {delay.dataType.simpleString()}"
            )
        payload = tuple(f.name for f in schema.fields if f.name.lower() not in _SPECIAL)
        if message is None and not payload:
            raise InvalidArgument(
                f'queue "{queue}": nothing to send: the DataFrame has no "message" column '
                "and no other column to make a message of"
            )
        return cls(
            message=message.name if message else None,
            message_is_text=message is not None and isinstance(message.dataType, StringType),
            headers=headers.name if headers else None,
            headers_is_text=headers is not None and isinstance(headers.dataType, StringType),
            delay=delay.name if delay else None,
            delay_is_time=delay is not None and isinstance(delay.dataType, TimestampType),
            payload=payload,
        )

    def messages(self, batch: pa.RecordBatch, queue: str) -> pa.Array:
        """The JSON text of each row's message."""
        if self.message is None:
            rows = batch.select(list(self.payload)).to_pylist(maps_as_pydicts="lossy")
            return _json_array(rows, queue, "message")
        column = batch.column(self.message)
        if column.null_count:
            raise InvalidPayload(f'queue "{queue}": column "message" holds a null')
        if self.message_is_text:
            return column
        return _json_array(column.to_pylist(maps_as_pydicts="lossy"), queue, "message")

    def headers_of(self, batch: pa.RecordBatch, queue: str) -> pa.Array:
        """The JSON text of each row's headers (null when there are none)."""
        if self.headers is None:
            return pa.nulls(batch.num_rows, pa.string())
        column = batch.column(self.headers)
        if self.headers_is_text:
            return column
        values = column.to_pylist(maps_as_pydicts="lossy")
        return _json_array(values, queue, "headers", keep_null=True)

    def visible_at(
        self, batch: pa.RecordBatch, now: datetime, queue: str, given_only: bool = False
    ) -> pa.Array:
        """Each row's vt as UTC text: ``now`` plus its delay, or a timestamp ``delay`` column.

        With ``given_only``, a row that gives no delay (no column, null, or 0 seconds: the
        project's rule for "none given") gets null, so the queue's ``delivery_delay``
        applies when it is sent. Text of naive UTC times, because Arrow writes zoned
        timestamps to CSV about forty times slower; the COPY runs with the session time
        zone set to UTC.
        """
        base = now.astimezone(UTC).replace(tzinfo=None)
        if self.delay is None:
            if given_only:
                return pa.nulls(batch.num_rows, pa.string())
            return pa.repeat(pa.scalar(base.isoformat(sep=" ")), batch.num_rows)
        column = batch.column(self.delay)
        if self.delay_is_time:
            times = pc.cast(column, _TIMESTAMP)
            if not given_only:
                times = pc.fill_null(times, pa.scalar(base, _UTC_NAIVE))
        else:
            seconds = pc.cast(column, pa.float64())
            lowest = pc.min(seconds).as_py() if len(seconds) else None
            if lowest is not None and lowest < 0:
                raise InvalidArgument(f'queue "{queue}": column "delay" holds a negative number')
            if given_only:
                none = pa.scalar(None, pa.float64())
                seconds = pc.if_else(pc.equal(seconds, 0.0), none, seconds)
            else:
                seconds = pc.fill_null(seconds, 0.0)
            micros = pc.cast(pc.round(pc.multiply(seconds, 1_000_000)), pa.int64())
            times = pc.add(pa.scalar(base, _UTC_NAIVE), pc.cast(micros, pa.duration("us")))
        return pc.cast(pc.cast(times, _UTC_NAIVE), pa.string())


def _json_array(values: list[Any], queue: str, what: str, keep_null: bool = False) -> pa.Array:
    try:
        texts = [None if v is None and keep_null else _dumps(v) for v in values]
    except (TypeError, ValueError) as exc:
        raise InvalidPayload(f'queue "{queue}": a {what} is not JSON-serializable: {exc}') from None
    return pa.array(texts, pa.string())


def to_csv(columns: dict[str, pa.Array]) -> bytes:
    """The columns as CSV lines for ``COPY ... FROM STDIN (FORMAT csv)``."""
    buffer = io.BytesIO()
    csv.write_csv(pa.table(columns), buffer, csv.WriteOptions(include_header=False))
    return buffer.getvalue()
