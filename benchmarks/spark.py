"""Spark benchmark: the pgmq source's write and read beside one psycopg COPY and JDBC.

    python -m benchmarks.spark [--rows 1000000] [--partitions 2] [--database-url URL]

Writes ``--rows`` small messages (``{"n": i}``) with one ``COPY`` from psycopg
(the baseline: the fastest a single client gets them in), then with Spark
(``to_json`` in the JVM, one COPY per partition), archives them, and reads the
archive back with the pgmq source and, when the Debian ``libpostgresql-jdbc-java``
jar is present and the server listens on TCP, with Spark's JDBC source.
Each Spark step runs once untimed first (worker start-up) and is then timed.
The database ``bench_spark`` on the server is dropped and migrated afresh.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

import psycopg
from psycopg import sql

JDBC_JAR = Path("/usr/share/java/postgresql.jar")
DBNAME = "bench_spark"


def server_url(given: str | None) -> str:
    """A postgres:// URL of the server: --database-url, DATABASE_URL, or the embedded one."""
    url = given or os.environ.get("DATABASE_URL")
    if url:
        return url
    from urllib.parse import quote

    from django_pgmq import embedded

    root = Path(__file__).resolve().parents[1]
    params = embedded.connection_params(root / ".pgdata" / "data", "postgres")
    host = quote(params["host"], safe="")
    return f"postgres://{params['user']}@{host}:{params['port']}/postgres"


def fresh_database(url: str) -> str:
    """Drop and create ``bench_spark``, migrate it, and return its URL."""
    parts = urlsplit(url)
    admin = urlunsplit(parts._replace(path="/postgres"))
    with psycopg.connect(admin, autocommit=True) as conn:
        conn.execute(
            sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(DBNAME))
        )
        conn.execute(sql.SQL("CREATE DATABASE {}").format(sql.Identifier(DBNAME)))
    bench = urlunsplit(parts._replace(path=f"/{DBNAME}"))
    os.environ["DATABASE_URL"] = bench
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "example_project.settings")
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", verbosity=0)
    return bench


def timed(step: Callable[[], object]) -> float:
    start = time.perf_counter()
    step()
    return time.perf_counter() - start


def copy_baseline(conn: psycopg.Connection, queue: str, rows: int) -> float:
    """Seconds for one COPY of ``rows`` prepared lines into the queue."""
    vt = conn.execute("SELECT now()").fetchone()[0].isoformat()
    data = "".join(f'{vt},"{{""n"":{i}}}"\n' for i in range(rows)).encode()
    table = sql.Identifier("pgmq", f"q_{queue}")

    def run() -> None:
        with (
            conn.cursor() as cur,
            cur.copy(
                sql.SQL("COPY {} (vt, message) FROM STDIN (FORMAT csv)").format(table)
            ) as copy,
        ):
            copy.write(data)

    return timed(run)


def spark_session(partitions: int, jdbc: bool):
    """A local session with ``partitions`` cores (and the JDBC driver when used)."""
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    from pyspark.sql import SparkSession

    from django_pgmq.contrib.spark import ensure_registered

    builder = (
        SparkSession.builder.master(f"local[{partitions}]")
        .appName("django-pgmq spark benchmark")
        .config("spark.ui.enabled", "false")
        .config("spark.ui.showConsoleProgress", "false")
        .config("spark.driver.bindAddress", "127.0.0.1")
        .config("spark.driver.host", "127.0.0.1")
        .config("spark.driver.memory", "4g")
    )
    if jdbc:
        builder = builder.config("spark.jars", str(JDBC_JAR))
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel("ERROR")
    ensure_registered(spark)
    return spark


def main() -> None:
    parser = argparse.ArgumentParser(description="Spark write/read beside COPY and JDBC.")
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--partitions", type=int, default=2)
    parser.add_argument("--database-url")
    args = parser.parse_args()

    bench_url = fresh_database(server_url(args.database_url))
    from pyspark.sql import functions as F

    import django_pgmq as pgmq
    from django_pgmq.contrib.spark import from_django, spark_options

    for queue in ("bench_copy", "bench_spark", "bench_warmup"):
        pgmq.create_queue(queue)
    options = spark_options(from_django())
    host = urlsplit(bench_url).hostname or ""
    jdbc = JDBC_JAR.exists() and not host.startswith("/")
    spark = spark_session(args.partitions, jdbc)
    results: list[tuple[str, float]] = []

    with psycopg.connect(**_psycopg_params(options), autocommit=True) as conn:
        results.append(("psycopg COPY, 1 connection", copy_baseline(conn, "bench_copy", args.rows)))

        def write(queue: str, rows: int) -> None:
            frame = spark.range(rows, numPartitions=args.partitions).select(
                F.to_json(F.struct(F.col("id").alias("n"))).alias("message")
            )
            frame.write.format("pgmq").options(**options, queue=queue).mode("append").save()

        write("bench_warmup", 1000)
        results.append(("Spark write, pgmq source", timed(lambda: write("bench_spark", args.rows))))

        conn.execute(
            "SELECT count(*) FROM pgmq.archive('bench_spark', "
            "array(SELECT msg_id FROM pgmq.q_bench_spark))"
        )
        conn.execute("VACUUM ANALYZE pgmq.a_bench_spark")

        def read_pgmq(parts: int) -> None:
            reader = spark.read.format("pgmq").options(**options, queue="bench_spark")
            frame = reader.option("source", "archive").option("numPartitions", parts).load()
            frame.write.format("noop").mode("overwrite").save()

        read_pgmq(1)
        read_rows = [("Spark read, pgmq source, 1 partition", timed(lambda: read_pgmq(1)))]
        if args.partitions > 1:
            label = f"Spark read, pgmq source, {args.partitions} partitions"
            read_rows.append((label, timed(lambda: read_pgmq(args.partitions))))
        if jdbc:
            url = _jdbc_url(bench_url)

            def read_jdbc() -> None:
                frame = spark.read.jdbc(url, "pgmq.a_bench_spark", properties=_jdbc_props(options))
                frame.write.format("noop").mode("overwrite").save()

            read_jdbc()
            read_rows.append(("Spark read, JDBC, 1 partition", timed(read_jdbc)))
        else:
            print(f"(JDBC skipped: needs {JDBC_JAR} and a server on TCP)")

    _report(args.rows, results, "write", results[0][1])
    _report(args.rows, read_rows, "read", read_rows[-1][1] if jdbc else read_rows[0][1])
    spark.stop()


def _psycopg_params(options: dict[str, str]) -> dict[str, str]:
    from psycopg.conninfo import conninfo_to_dict

    params = conninfo_to_dict(options["dsn"])
    if "password" in options:
        params["password"] = options["password"]
    return params


def _jdbc_url(url: str) -> str:
    parts = urlsplit(url)
    return f"jdbc:postgresql://{parts.hostname}:{parts.port or 5432}{parts.path}"


def _jdbc_props(options: dict[str, str]) -> dict[str, str]:
    params = _psycopg_params(options)
    props = {"user": params.get("user", "postgres"), "driver": "org.postgresql.Driver"}
    if params.get("password"):
        props["password"] = params["password"]
    return props


def _report(rows: int, results: list[tuple[str, float]], what: str, baseline: float) -> None:
    print(f"\n{what} of {rows:,} messages")
    print(f"{'':44} {'seconds':>8} {'msg/s':>10} {'vs baseline':>12}")
    for label, seconds in results:
        print(f"{label:44} {seconds:8.2f} {rows / seconds:10,.0f} {baseline / seconds:11.2f}x")


if __name__ == "__main__":
    main()
