"""Workflows through the SQL API only: a plain psycopg client, the names of sql/55_workflows.sql."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import psycopg
import pytest
from psycopg.types.json import Jsonb

pytestmark = pytest.mark.usefixtures("django_db_setup")


@pytest.fixture
def db(pg_connect) -> psycopg.Connection:
    conn = pg_connect()
    conn.execute("SET lock_timeout = '20s'")
    return conn


@pytest.fixture
def queues(db) -> Iterator[Callable[[int], list[str]]]:
    """Make n fresh queues (dropped afterwards)."""
    made: list[str] = []

    def make(n: int) -> list[str]:
        names = [f"wf_{uuid.uuid4().hex[:12]}" for _ in range(n)]
        for name in names:
            db.execute("SELECT pgmq.create(%s)", [name])
        made.extend(names)
        return names

    yield make
    for name in made:
        db.execute("SELECT pgmq.drop_queue(%s)", [name])


def create(db: psycopg.Connection, steps: list[dict[str, Any]], on_failure: str = "cancel") -> int:
    return db.execute("SELECT pgmq.create_workflow(%s, %s)", [Jsonb(steps), on_failure]).fetchone()[
        0
    ]


def status(db: psycopg.Connection, wid: int) -> dict[str, tuple[str, Any, Any]]:
    rows = db.execute(
        "SELECT step, status, result, error FROM pgmq.workflow_status(%s)", [wid]
    ).fetchall()
    return {r[0]: (r[1], r[2], r[3]) for r in rows}


def messages(db: psycopg.Connection, queue: str) -> list[tuple[int, Any, dict[str, Any]]]:
    return db.execute(
        "SELECT msg_id, message, headers FROM pgmq.read(%s, 30, 1000)", [queue]
    ).fetchall()


def test_plain_client_drives_a_chord_to_its_end(db, queues) -> None:
    q, cb = queues(2)
    wid = create(
        db,
        [
            {"step": "a", "queue": q, "message": {"n": 1}},
            {"step": "b", "queue": q, "message": {"n": 2}, "headers": {"h": 1}},
            {"step": "merge", "queue": cb, "message": {}, "after": ["a", "b"]},
        ],
    )
    got = {m[2]["workflow"]["step"]: m for m in messages(db, q)}
    assert set(got) == {"a", "b"}
    assert got["b"][2] == {"h": 1, "workflow": {"id": wid, "step": "b"}}
    assert status(db, wid)["merge"][0] == "waiting"

    db.execute("SELECT pgmq.complete(%s, %s, %s)", [q, got["a"][0], Jsonb({"r": "A"})])
    assert messages(db, cb) == []
    db.execute("SELECT pgmq.delete(%s, %s::bigint[])", [q, [got["b"][0]]])  # array form
    (merge,) = messages(db, cb)
    assert merge[2]["workflow"] == {
        "id": wid,
        "step": "merge",
        "results": {"a": {"r": "A"}, "b": None},
    }
    db.execute("SELECT pgmq.archive(%s, %s)", [cb, merge[0]])
    assert status(db, wid) == {
        "a": ("done", {"r": "A"}, None),
        "b": ("done", None, None),
        "merge": ("done", None, None),
    }
    (listed,) = [
        r
        for r in db.execute(
            "SELECT workflow_id, status, steps_done, steps_total FROM pgmq.list_workflows()"
        ).fetchall()
        if r[0] == wid
    ]
    assert listed == (wid, "done", 3, 3)


def test_a_workflow_created_in_a_rolled_back_transaction_never_ran(pg_connect, queues) -> None:
    (q,) = queues(1)
    conn = pg_connect(autocommit=False)
    wid = create(conn, [{"step": "a", "queue": q, "message": {}}])
    conn.rollback()
    check = pg_connect()
    assert check.execute("SELECT count(*) FROM pgmq.q_" + q).fetchone() == (0,)
    with pytest.raises(psycopg.Error, match=f"workflow {wid} does not exist") as caught:
        status(check, wid)
    assert caught.value.sqlstate == "PQ006"


def test_a_second_ack_a_copy_and_a_forged_header_do_nothing(db, queues) -> None:
    q, cb = queues(2)
    wid = create(
        db,
        [
            {"step": "a", "queue": q, "message": {}},
            {"step": "b", "queue": q, "message": {}},
            {"step": "c", "queue": cb, "message": {}, "after": ["a", "b"]},
        ],
    )
    (a, b) = sorted(messages(db, q))
    # a copy of a's message (same header, another msg_id) acknowledged: nothing
    copy = db.execute("SELECT pgmq.send(%s, '{}'::jsonb, %s)", [q, Jsonb(a[2])]).fetchone()[0]
    db.execute("SELECT pgmq.delete(%s, %s::bigint)", [q, copy])
    assert status(db, wid)["a"][0] == "sent"
    db.execute("SELECT pgmq.archive(%s, %s::bigint)", [q, a[0]])
    assert db.execute("SELECT pgmq.archive(%s, %s::bigint)", [q, a[0]]).fetchone() == (False,)
    # a header naming b, on a message that is not b's
    forged = db.execute(
        "SELECT pgmq.send(%s, '{}'::jsonb, %s)",
        [q, Jsonb({"workflow": {"id": wid, "step": "b"}})],
    ).fetchone()[0]
    db.execute("SELECT pgmq.delete(%s, %s::bigint)", [q, forged])
    assert status(db, wid)["b"][0] == "sent"
    assert messages(db, cb) == []
    db.execute("SELECT pgmq.set_vt(%s, %s::bigint, 0)", [q, b[0]])
    db.execute("SELECT pgmq.pop(%s, 10)", [q])  # pop is an acknowledgement too
    assert status(db, wid)["b"][0] == "done"
    assert len(messages(db, cb)) == 1


@pytest.mark.parametrize("policy", ["cancel", "continue"])
def test_fail_cancels_dependents_or_passes_the_error_on(db, queues, policy) -> None:
    (q,) = queues(1)
    wid = create(
        db,
        [
            {"step": "a", "queue": q, "message": {}},
            {"step": "side", "queue": q, "message": {}},
            {"step": "b", "queue": q, "message": {}, "after": ["a"]},
            {"step": "c", "queue": q, "message": {}, "after": ["b", "side"]},
        ],
        policy,
    )
    first = {m[2]["workflow"]["step"]: m[0] for m in messages(db, q)}
    assert db.execute(
        "SELECT pgmq.fail(%s, %s, %s)", [q, first["a"], Jsonb({"why": "boom"})]
    ).fetchone() == (True,)
    db.execute("SELECT pgmq.delete(%s, %s::bigint)", [q, first["side"]])
    seen = status(db, wid)
    assert seen["a"] == ("failed", None, {"why": "boom"})
    if policy == "cancel":
        assert (seen["b"][0], seen["c"][0], seen["side"][0]) == ("cancelled", "cancelled", "done")
        assert messages(db, q) == []
    else:
        (b,) = messages(db, q)
        assert b[2]["workflow"]["results"] == {"a": {"error": {"why": "boom"}}}
        db.execute("SELECT pgmq.delete(%s, %s::bigint)", [q, b[0]])
        (c,) = messages(db, q)
        assert c[2]["workflow"]["step"] == "c"


def test_cancel_deletes_sent_messages_and_stops_the_rest(db, queues) -> None:
    (q,) = queues(1)
    wid = create(
        db,
        [
            {"step": "a", "queue": q, "message": {}},
            {"step": "b", "queue": q, "message": {}, "after": ["a"]},
        ],
    )
    assert db.execute("SELECT pgmq.cancel_workflow(%s)", [wid]).fetchone() == (2,)
    assert db.execute(f"SELECT count(*) FROM pgmq.q_{q}").fetchone() == (0,)
    assert {s: v[0] for s, v in status(db, wid).items()} == {"a": "cancelled", "b": "cancelled"}
    assert db.execute("SELECT pgmq.cancel_workflow(%s)", [wid]).fetchone() == (0,)
    (listed,) = db.execute(
        "SELECT status FROM pgmq.list_workflows() WHERE workflow_id = %s", [wid]
    ).fetchall()
    assert listed == ("cancelled",)


def test_complete_and_fail_of_a_plain_message_archive_it(db, queues) -> None:
    (q,) = queues(1)
    mid = db.execute("SELECT pgmq.send(%s, '{}'::jsonb)", [q]).fetchone()[0]
    assert db.execute("SELECT pgmq.complete(%s, %s, '1')", [q, mid]).fetchone() == (True,)
    assert db.execute("SELECT pgmq.fail(%s, %s, '1')", [q, mid]).fetchone() == (False,)
    assert db.execute(f"SELECT count(*) FROM pgmq.a_{q}").fetchone() == (1,)
    with pytest.raises(psycopg.Error) as caught:
        db.execute("SELECT pgmq.complete('wf_no_such_queue', 1, '1')")
    assert caught.value.sqlstate == "PQ002"


def test_purge_and_drop_fail_the_steps_they_took(db, queues) -> None:
    q, other = queues(2)
    wid = create(
        db,
        [
            {"step": "a", "queue": q, "message": {}},
            {"step": "b", "queue": other, "message": {}},
            {"step": "c", "queue": q, "message": {}, "after": ["b"]},
        ],
        "continue",
    )
    db.execute("SELECT pgmq.purge_queue(%s)", [q])
    assert status(db, wid)["a"][0:3:2] == ("failed", {"error": f'queue "{q}" was purged'})
    db.execute("SELECT pgmq.drop_queue(%s)", [q])
    db.execute("SELECT pgmq.create(%s)", [q])  # so the fixture's drop finds it
    db.execute("SELECT pgmq.drop_queue(%s)", [q])
    (b,) = messages(db, other)
    db.execute("SELECT pgmq.delete(%s, %s::bigint)", [other, b[0]])
    seen = status(db, wid)
    assert seen["c"][0:3:2] == ("failed", {"error": f'queue "{q}" does not exist'})
    db.execute("SELECT pgmq.create(%s)", [q])


BAD_SPECS = [
    ("[]", None, "a workflow has 1 to 10000 steps, got 0"),
    ('{"step": "a"}', None, "workflow steps must be a JSON array"),
    (
        '[{"step": "a", "queue": "Q", "message": {}, "extra": 1}]',
        None,
        'step "a": unknown key "extra"',
    ),
    ('[{"queue": "Q", "message": {}}]', None, 'step #1: "step" must be a non-empty string'),
    ('[{"step": "a", "queue": "Q"}]', None, 'step "a": "message" is missing'),
    (
        '[{"step": "a", "queue": "Q", "message": 1, "headers": []}]',
        None,
        '"headers" must be a JSON object',
    ),
    (
        '[{"step": "a", "queue": "Q", "message": 1, "headers": {"workflow": 1}}]',
        None,
        'step "a": "headers" must not hold "workflow"',
    ),
    ('[{"step": "a", "queue": "Q", "message": 1, "after": "b"}]', None, '"after" must be an array'),
    (
        '[{"step": "a", "queue": "Q", "message": 1}, {"step": "a", "queue": "Q", "message": 2}]',
        None,
        'step "a": the name is used by more than one step',
    ),
    (
        '[{"step": "a", "queue": "Q", "message": 1, "after": ["zz"]}]',
        None,
        'step "a": "after" names "zz", which is not a step of this workflow',
    ),
    (
        '[{"step": "a", "queue": "Q", "message": 1, "after": ["a"]}]',
        None,
        'step "a": "after" names "a", which names the step itself',
    ),
    (
        '[{"step": "b", "queue": "Q", "message": 1}, '
        '{"step": "a", "queue": "Q", "message": 1, "after": ["b", "b"]}]',
        None,
        'step "a": "after" names "b", which is listed twice',
    ),
    (
        '[{"step": "r", "queue": "Q", "message": 1}, '
        '{"step": "x", "queue": "Q", "message": 1, "after": ["r", "z"]}, '
        '{"step": "y", "queue": "Q", "message": 1, "after": ["x"]}, '
        '{"step": "z", "queue": "Q", "message": 1, "after": ["y"]}]',
        None,
        "form a cycle",
    ),
    (
        '[{"step": "a", "queue": "wf_missing_q", "message": 1}]',
        "PQ002",
        'step "a": queue "wf_missing_q" does not exist',
    ),
    (
        '[{"step": "a", "queue": "bad;name", "message": 1}]',
        "PQ001",
        'step "a": queue name contains invalid',
    ),
]


@pytest.mark.parametrize(("spec", "code", "text"), BAD_SPECS)
def test_a_bad_spec_is_refused_naming_the_step_and_nothing_is_written(
    db, queues, spec, code, text
) -> None:
    (q,) = queues(1)
    before = db.execute("SELECT count(*) FROM pgmq.workflow").fetchone()
    with pytest.raises(psycopg.Error) as caught:
        db.execute("SELECT pgmq.create_workflow(%s::jsonb)", [spec.replace('"Q"', json.dumps(q))])
    primary = caught.value.diag.message_primary or ""
    assert text in primary and "\n" not in primary
    assert caught.value.sqlstate == (code or "PQ004")
    assert db.execute("SELECT count(*) FROM pgmq.workflow").fetchone() == before
    assert db.execute(f"SELECT count(*) FROM pgmq.q_{q}").fetchone() == (0,)


def test_bad_policy_and_too_many_steps_are_refused(db, queues) -> None:
    (q,) = queues(1)
    with pytest.raises(psycopg.Error, match="on_failure must be 'cancel' or 'continue'"):
        create(db, [{"step": "a", "queue": q, "message": 1}], "retry")
    spec = [{"step": f"s{i}", "queue": q, "message": 1} for i in range(10_001)]
    with pytest.raises(psycopg.Error, match="1 to 10000 steps, got 10001"):
        create(db, spec)


def test_every_queue_kind_carries_the_trigger(db, queues) -> None:
    name = f"wf_{uuid.uuid4().hex[:12]}"
    db.execute("SELECT pgmq.create_partitioned(%s, '10', '100')", [name])
    try:
        wid = create(
            db,
            [
                {"step": "a", "queue": name, "message": {}},
                {"step": "b", "queue": name, "message": {}, "after": ["a"]},
            ],
        )
        (a,) = messages(db, name)
        db.execute("SELECT pgmq.archive(%s, %s::bigint)", [name, a[0]])
        assert status(db, wid)["b"][0] == "sent"
    finally:
        db.execute("SELECT pgmq.drop_queue(%s)", [name])


def test_an_expired_step_message_fails_the_step(db, queues) -> None:
    (q,) = queues(1)
    wid = create(
        db,
        [
            {"step": "a", "queue": q, "message": {}},
            {"step": "b", "queue": q, "message": {}, "after": ["a"]},
        ],
    )
    db.execute("SELECT pgmq.set_queue_attributes(%s, '{\"message_retention\": 1}')", [q])
    db.execute(f"UPDATE pgmq.q_{q} SET enqueued_at = now() - interval '1 hour'")
    db.execute("SELECT * FROM pgmq._retention_batch(%s)", [q])
    assert status(db, wid) == {
        "a": ("failed", None, {"error": "expired: message_retention"}),
        "b": ("cancelled", None, None),
    }


def test_a_step_its_queue_refuses_fails_instead_of_the_acknowledgement(db, queues) -> None:
    q, small = queues(2)
    db.execute("SELECT pgmq.set_queue_attributes(%s, '{\"max_message_size\": 200}')", [small])
    wid = create(
        db,
        [
            {"step": "a", "queue": q, "message": {}},
            {"step": "b", "queue": small, "message": {"pad": "x" * 250}, "after": ["a"]},
            {"step": "c", "queue": q, "message": {}, "after": ["b"]},
        ],
    )
    (a,) = messages(db, q)
    db.execute("SELECT pgmq.complete(%s, %s, '1')", [q, a[0]])  # the acknowledgement stands
    seen = status(db, wid)
    assert seen["a"][0] == "done"
    assert seen["b"][0] == "failed" and "max_message_size" in seen["b"][2]["error"]
    assert seen["c"][0] == "cancelled"


def test_a_partition_dropped_by_retention_fails_the_steps_it_held(db) -> None:
    name = f"wf_{uuid.uuid4().hex[:12]}"
    db.execute("SELECT pgmq.create_partitioned(%s, '10', '20')", [name])
    try:
        wid = create(
            db,
            [
                {"step": "a", "queue": name, "message": {}},
                {"step": "b", "queue": name, "message": {}, "after": ["a"]},
            ],
        )
        db.execute("SELECT pgmq.send_batch(%s, array_fill('{}'::jsonb, ARRAY[40]))", [name])
        db.execute("SELECT * FROM pgmq.maintain_partitions(%s)", [name])
        seen = status(db, wid)
        assert seen["a"][0] == "failed"
        assert "dropped by retention" in seen["a"][2]["error"]
        assert seen["b"][0] == "cancelled"
    finally:
        db.execute("SELECT pgmq.drop_queue(%s)", [name])


def test_a_one_parent_child_gets_its_parents_result_however_the_parent_finished(db, queues) -> None:
    # a chain's next step and a fan-out's branches take the finished step's outcome from
    # the acknowledgement itself; a parent failed by a purge goes the statement's way
    q, other = queues(2)
    wid = create(
        db,
        [
            {"step": "a", "queue": q, "message": {}},
            {"step": "b", "queue": q, "message": {"n": 2}, "headers": {"h": 1}, "after": ["a"]},
            {"step": "c", "queue": q, "message": {}, "after": ["a"]},
            {"step": "d", "queue": other, "message": {}, "after": ["b"]},
            {"step": "e", "queue": q, "message": {}, "after": ["d"]},
        ],
        "continue",
    )
    ((a, _, _),) = messages(db, q)
    db.execute("SELECT pgmq.complete(%s, %s, %s)", [q, a, Jsonb({"r": [1, "x"]})])
    got = {m[2]["workflow"]["step"]: m for m in messages(db, q)}
    assert got["b"][1:] == (
        {"n": 2},
        {"h": 1, "workflow": {"id": wid, "step": "b", "results": {"a": {"r": [1, "x"]}}}},
    )
    assert got["c"][2]["workflow"] == {"id": wid, "step": "c", "results": {"a": {"r": [1, "x"]}}}
    db.execute("SELECT pgmq.archive(%s, %s)", [q, got["c"][0]])  # no result: null
    db.execute("SELECT pgmq.archive(%s, %s)", [q, got["b"][0]])
    ((_, _, hdr),) = messages(db, other)
    assert hdr["workflow"]["results"] == {"b": None}
    db.execute("SELECT pgmq.purge_queue(%s)", [other])
    ((_, _, hdr),) = messages(db, q)
    assert hdr["workflow"]["results"] == {"d": {"error": {"error": f'queue "{other}" was purged'}}}
    assert status(db, wid)["d"][0] == "failed"


def test_a_chain_step_sends_the_next_without_a_stripe_and_old_rows_still_advance(
    db, queues
) -> None:
    # a child with one parent has no stripe row (its parent's child_stripes says -1); a
    # workflow made before migration 0009 has stripe 0 and a row for it: both advance
    q, nq = queues(2)
    wid = create(
        db,
        [
            {"step": "a", "queue": q, "message": {}},
            {"step": "b", "queue": nq, "message": {"n": 1}, "after": ["a"]},
            {"step": "c", "queue": nq, "message": {"n": 2}, "after": ["b"]},
        ],
    )
    rows = db.execute(
        "SELECT step, child_stripes, stripes_left FROM pgmq.workflow_step"
        " WHERE workflow_id = %s ORDER BY step",
        [wid],
    ).fetchall()
    assert rows == [("a", [-1], 0), ("b", [-1], 1), ("c", [], 1)]
    assert db.execute(
        "SELECT count(*) FROM pgmq.workflow_stripe WHERE workflow_id = %s", [wid]
    ).fetchone() == (0,)
    # b and c as a workflow made before 0009 has them
    db.execute(
        "UPDATE pgmq.workflow_step SET child_stripes = '{0}' WHERE workflow_id = %s AND step = 'b'",
        [wid],
    )
    db.execute(
        "INSERT INTO pgmq.workflow_stripe (workflow_id, step_no, stripe, pending)"
        " SELECT workflow_id, step_no, 0, 1 FROM pgmq.workflow_step"
        " WHERE workflow_id = %s AND step = 'c'",
        [wid],
    )
    ((a, _, _),) = messages(db, q)
    db.execute("SELECT pgmq.complete(%s, %s, '7')", [q, a])
    ((b, msg, hdr),) = messages(db, nq)
    assert (msg, hdr) == ({"n": 1}, {"workflow": {"id": wid, "step": "b", "results": {"a": 7}}})
    db.execute("SELECT pgmq.delete(%s, %s::bigint)", [nq, b])
    ((c, msg, hdr),) = messages(db, nq)
    assert (msg, hdr) == ({"n": 2}, {"workflow": {"id": wid, "step": "c", "results": {"b": None}}})
    ids = dict(db.execute("SELECT step, msg_id FROM pgmq.workflow_status(%s)", [wid]).fetchall())
    assert (ids["b"], ids["c"]) == (b, c)


def test_a_chain_step_finds_its_queue_sequence_whatever_its_name(db) -> None:
    # queue "x_msg_id_seq" made first takes the table name q_x_msg_id_seq, the name queue
    # x's msg_id sequence would have had: the next step of a chain on x still gets x's ids
    base = f"wf_{uuid.uuid4().hex[:8]}"
    for name in (f"{base}_msg_id_seq", base):
        db.execute("SELECT pgmq.create(%s)", [name])
    try:
        wid = create(
            db,
            [
                {"step": "a", "queue": base, "message": {}},
                {"step": "b", "queue": base, "message": {"n": 1}, "after": ["a"]},
            ],
        )
        ((a, _, _),) = messages(db, base)
        db.execute("SELECT pgmq.archive(%s, %s::bigint)", [base, a])
        ((b, msg, _),) = messages(db, base)
        assert msg == {"n": 1} and b == a + 1
        assert status(db, wid)["b"][0] == "sent"
    finally:
        for name in (base, f"{base}_msg_id_seq"):
            db.execute("SELECT pgmq.drop_queue(%s)", [name])
