"""One SQLSTATE, one error class, whoever runs the statement (`django_pgmq.sqlrun`)."""

from __future__ import annotations

import pytest
from django.db import connection

from django_pgmq import sqlrun
from django_pgmq.contrib.celery import database
from django_pgmq.contrib.spark import conninfo
from django_pgmq.contrib.spark.db import connection as spark_connection
from django_pgmq.errors import InvalidQueueName, QueueNotFound

MISSING = "sqlrun_no_such_queue"


def test_a_missing_queue_is_queue_not_found_from_every_caller(manager, pg_connect, pg_dsn):
    with pytest.raises(QueueNotFound, match=MISSING):
        manager.read(MISSING, vt=30, qty=1)
    celery_params = {"queue": MISSING, "vt": 30, "qty": 1}
    with pytest.raises(QueueNotFound, match=MISSING):
        database.run(pg_connect(), "celery_read", celery_params)  # a plain session
    with pytest.raises(QueueNotFound, match=MISSING):
        database.run(connection, "celery_read", celery_params)  # Django's connection
    spark = spark_connection(conninfo.from_string(pg_dsn), MISSING)
    with spark as db, pytest.raises(QueueNotFound, match=MISSING):
        db.run("require_queue", {"queue": MISSING})


def test_our_own_sqlstate_is_the_same_class_on_either_connection(manager, pg_connect):
    bad = "bad name!"  # PQ001
    with pytest.raises(InvalidQueueName):
        manager.create_queue(bad)
    for conn in (pg_connect(), connection):
        with pytest.raises(InvalidQueueName):
            sqlrun.run(conn, "create", {"queue": bad}, queue=bad)
