"""A Spark stream of a limited queue: each micro-batch claims no more than max_in_flight
allows (pgmq.spark_claim goes through the claim filter), and acknowledging frees slots."""

from __future__ import annotations

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'django-pgmq[spark]'")
pytest.importorskip("pyarrow", reason="pyarrow is not installed: pip install 'django-pgmq[spark]'")

from pyspark.sql.streaming.datasource import ReadAllAvailable

import django_pgmq as pgmq
from tests.integration.test_spark_attributes import stream_reader
from tests.spark_support import read_all

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_stream_claims_no_more_than_max_in_flight_until_it_acknowledges(pg_dsn, queue):
    ids = pgmq.send_batch(queue, [{"n": n} for n in range(5)])
    pgmq.set_queue_attributes(queue, max_in_flight=2)
    reader = stream_reader(pg_dsn, queue)
    try:
        start = reader.initialOffset()
        end = reader.latestOffset(start, ReadAllAvailable())
        got = read_all(reader, reader.partitions(start, end)).column("msg_id").to_pylist()
        assert got == ids[:2]
        assert pgmq.read(queue, vt=30, qty=5) == []  # the stream's batch holds both slots
        after = reader.latestOffset(end, ReadAllAvailable())  # acknowledges it: slots free
        more = read_all(reader, reader.partitions(end, after)).column("msg_id").to_pylist()
        assert more == ids[2:4]
    finally:
        reader.stop()
