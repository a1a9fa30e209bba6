"""The example streaming job's sink: results and acknowledgement in one transaction."""

from __future__ import annotations

import json
from collections import namedtuple

import pytest

pytest.importorskip("pyspark", reason="pyspark is not installed: pip install 'django-pgmq[spark]'")
pytest.importorskip("pyarrow", reason="pyarrow is not installed: pip install 'django-pgmq[spark]'")

import django_pgmq as pgmq
from example_project import spark_job

pytestmark = pytest.mark.django_db(transaction=True)

Row = namedtuple("Row", "msg_id message")


def test_a_replayed_partition_writes_each_result_once(pg_dsn, pg_connect, queue):
    conn = pg_connect()
    conn.execute(spark_job.CREATE_RESULTS)
    order = {"items": [{"price": 2.5, "qty": 2}, {"price": 1}]}
    ids = pgmq.send_batch(queue, [order, {"note": "no items"}])
    rows = [Row(m.msg_id, json.dumps(m.message)) for m in pgmq.read(queue, vt=60, qty=2)]
    options = {"dsn": pg_dsn}
    assert spark_job.write_partition(options, queue, iter(rows)) == 2
    spark_job.write_partition(options, queue, iter(rows))  # the same partition, replayed
    stored = conn.execute(
        "SELECT msg_id, total FROM demo_spark_result WHERE queue = %s ORDER BY msg_id", [queue]
    ).fetchall()
    assert stored == [(ids[0], 6), (ids[1], None)]
    assert pgmq.metrics(queue).queue_length == 0
    assert pgmq.QueueManager().archive_count(queue) == 2
    conn.execute("DROP TABLE demo_spark_result")
