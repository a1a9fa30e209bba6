"""The admin's operations beyond single messages: pause and resume, bulk actions by filter,
the error history of a message and handler durations; the worker's side of each."""

from __future__ import annotations

import json
import re
from datetime import timedelta

import pytest
from django.core.management import call_command

from django_pgmq.dashboard.timings import handler_durations
from django_pgmq.errors import InvalidArgument
from django_pgmq.models import HandlerTiming
from django_pgmq.pausing import paused_queues
from django_pgmq.worker.timing import Timings, record_timings
from example_project.demo.models import HandlerRun
from tests.integration.test_admin_views import ALL_PERMS, login, page, text

WEEK = timedelta(days=7)


@pytest.fixture
def operator(client, transactional_db):
    login(client, *ALL_PERMS)
    return client


def consume(*queues: str, **options) -> None:
    call_command(
        "pgmq_consume",
        *queues,
        handler="tests.handlers.handle",
        until_empty=True,
        poll_interval=0.05,
        verbosity=0,
        **options,
    )


# -- pause and resume ------------------------------------------------------------------


def test_pause_then_resume_from_the_queue_page(operator, queue):
    response = operator.post(page(queue, "pause/"), {"paused": "1"}, follow=True)
    assert "Paused consumption" in text(response)
    assert paused_queues("default") == {queue}
    assert 'id="pgmq-consumption">paused' in response.content.decode()
    response = operator.post(page(queue, "pause/"), {"paused": "0"}, follow=True)
    assert "Resumed consumption" in text(response)
    assert paused_queues("default") == frozenset()


def test_pausing_keeps_the_queues_other_attributes_and_stops_every_reader(operator, queue, manager):
    manager.set_queue_attributes(queue, max_message_size=1000)
    manager.send(queue, {"n": 1})
    operator.post(page(queue, "pause/"), {"paused": "1"})
    assert manager.get_queue_attributes(queue) == {"max_message_size": 1000, "paused": True}
    assert manager.read(queue, vt=30, qty=10) == []  # any client: the SQL API says so
    operator.post(page(queue, "pause/"), {"paused": "0"})
    assert manager.get_queue_attributes(queue) == {"max_message_size": 1000}
    assert len(manager.read(queue, vt=30, qty=10)) == 1


def test_pause_needs_a_post_and_the_change_permission(client, transactional_db, queue):
    login(client, "view_queue")
    assert client.post(page(queue, "pause/"), {"paused": "1"}).status_code == 403
    assert paused_queues("default") == frozenset()


def test_a_worker_does_not_read_a_paused_queue_and_reads_it_once_resumed(queue, manager, internal):
    other = queue + "_b"
    manager.create_queue(other)
    try:
        manager.send_batch(queue, [{"n": i, "q": "paused"} for i in range(3)])
        manager.send_batch(other, [{"n": i, "q": "running"} for i in range(2)])
        manager.pause_queue(queue)
        consume(queue, other)
        ran = [p["q"] for p in HandlerRun.objects.values_list("payload", flat=True)]
        assert ran == ["running", "running"]
        assert [m.read_ct for m in internal.browse_messages(queue)] == [0, 0, 0]
        assert paused_queues("default") == {queue}  # the worker keeps the flag

        manager.resume_queue(queue)
        consume(queue, other)
        ran = [p["q"] for p in HandlerRun.objects.values_list("payload", flat=True)]
        assert sorted(ran) == ["paused"] * 3 + ["running"] * 2
        assert internal.browse_messages(queue) == []
    finally:
        manager.drop_queue(other)


def test_a_paused_queue_is_flagged_on_the_overview(operator, queue, manager):
    manager.pause_queue(queue)  # as manage.py pgmq_pause does
    html = operator.get("/admin/django_pgmq/queue/").content.decode()
    row = re.search(rf'<tr[^>]*data-queue="{queue}".*?</tr>', html, re.S).group(0)
    assert "paused" in row and "pgmq-attention" in row


# -- bulk actions ----------------------------------------------------------------------


def _bulk(client, queue: str, **params):
    return client.get(page(queue, "bulk/"), params)


def _confirm(client, queue: str, response, **extra):
    """Post the confirmation form of ``response`` as the browser would."""
    html = response.content.decode()
    form = re.search(r'<form method="post".*?</form>', html, re.S).group(0)
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)"', form))
    fields.pop("csrfmiddlewaretoken", None)
    fields = {k: v.replace("&quot;", '"') for k, v in fields.items()}
    return client.post(page(queue, "bulk/"), {**fields, **extra}, follow=True)


def test_bulk_retry_shows_the_count_then_acts_on_every_match_in_batches(
    operator, queue, manager, internal, monkeypatch
):
    from django_pgmq.dashboard import bulk

    monkeypatch.setattr(bulk, "BATCH", 3)  # several batches with few rows
    wanted = manager.send_batch(queue, [{"kind": "a", "n": i} for i in range(7)])
    others = manager.send_batch(queue, [{"kind": "b", "n": i} for i in range(2)])
    manager.read(queue, vt=600, qty=9)  # all in flight
    contains = json.dumps({"kind": "a"})

    response = _bulk(operator, queue, source="live", bulk_action="retry", contains=contains)
    assert response.status_code == 200
    assert re.search(r'id="pgmq-count">7<', response.content.decode())
    assert all(m.vt > m.enqueued_at for m in internal.browse_messages(queue))  # nothing done yet
    late = manager.send(queue, {"kind": "a", "late": True}, delay=600)  # after the count

    done = _confirm(operator, queue, response)
    assert "7 messages in 3 batches" in text(done)
    visible = {m.msg_id for m in manager.read(queue, vt=30, qty=20)}
    assert visible == set(wanted)  # not the others, not the late one
    assert late not in visible and not set(others) & visible


def test_bulk_delete_and_move_dead_letters(operator, queue, manager, internal):
    dlq = queue + "_dlq"
    target = queue + "_t"
    manager.create_queue(dlq)
    manager.create_queue(target)
    try:
        manager.send_batch(dlq, [{"n": i} for i in range(4)])
        moved = _confirm(
            operator,
            queue,
            _bulk(operator, queue, source="dlq", bulk_action="move", target=target),
        )
        assert f"to {target}" in text(moved)
        assert len(internal.browse_messages(target)) == 4 and not internal.browse_messages(dlq)

        manager.send_batch(queue, [{"n": i} for i in range(5)])
        deleted = _confirm(
            operator, queue, _bulk(operator, queue, source="live", bulk_action="delete", read_ct=0)
        )
        assert "5 messages in 1 batches" in text(deleted)
        assert internal.browse_messages(queue) == []
    finally:
        manager.drop_queue(dlq)
        manager.drop_queue(target)


@pytest.mark.parametrize(
    ("params", "error"),
    [
        ({"source": "archive", "bulk_action": "delete"}, "does not apply to archive messages"),
        ({"source": "live", "bulk_action": "move", "target": "bad;name"}, "invalid characters"),
        ({"source": "live", "bulk_action": "explode"}, "Select a valid choice"),
        ({"source": "live", "bulk_action": "retry", "contains": "{oops"}, "Not valid JSON"),
    ],
)
def test_a_bad_bulk_request_does_nothing_and_says_why(
    operator, queue, manager, internal, params, error
):
    manager.send(queue, {"n": 1})
    response = operator.get(page(queue, "bulk/"), params, follow=True)
    assert error in text(response)
    assert "Nothing done" in text(response)
    assert len(internal.browse_messages(queue)) == 1


def test_moving_to_a_missing_queue_is_refused_with_the_reason(operator, queue, manager, internal):
    manager.send(queue, {"n": 1})
    params = {"source": "live", "bulk_action": "move", "target": "t_nowhere_x"}
    response = operator.get(page(queue, "bulk/"), params, follow=True)
    assert 'queue "t_nowhere_x" does not exist' in text(response).replace("&quot;", '"')
    assert "Nothing done" in text(response)
    response = operator.post(page(queue, "bulk/"), {**params, "last_id": 1}, follow=True)
    assert "Nothing done" in text(response)
    assert len(internal.browse_messages(queue)) == 1


def test_a_bulk_run_stopped_by_an_error_says_how_far_it_got(queue, manager, internal, monkeypatch):
    """Batches before the failing one stay done; the failing one rolls back whole."""
    from django_pgmq.dashboard import bulk

    monkeypatch.setattr(bulk, "BATCH", 2)
    ids = manager.send_batch(queue, [{"n": i} for i in range(5)])
    plan = bulk.BulkPlan(queue, queue, False, "archive", None, {})
    calls = []
    real_apply = bulk.BulkPlan.apply

    def failing_apply(self, manager, batch):
        calls.append(batch)
        done = real_apply(self, manager, batch)
        if len(calls) == 2:
            raise InvalidArgument("boom")
        return done

    monkeypatch.setattr(bulk.BulkPlan, "apply", failing_apply)
    progress = bulk.run_in_batches(internal, plan, ids[-1])
    assert (progress.done, progress.batches, str(progress.error)) == (2, 1, "boom")
    assert [m.msg_id for m in internal.browse_messages(queue, newest_first=False)] == ids[2:]


def test_bulk_delete_needs_the_delete_permission(client, transactional_db, queue, manager):
    login(client, "view_queue", "change_queue")
    manager.send(queue, {"n": 1})
    response = client.get(page(queue, "bulk/"), {"source": "live", "bulk_action": "delete"})
    assert response.status_code == 403


# -- error history and handler durations ------------------------------------------------


def test_each_failed_attempt_is_kept_and_shown_with_the_dead_letter(
    operator, queue, manager, internal
):
    msg_id = manager.send(queue, {"n": 1, "fail_times": 9})
    consume(queue, max_receive_count=3, retry_delay=0.01)
    [dead] = internal.browse_messages(queue + "_dlq")
    errors = dead.headers["attempt_errors"]
    assert [e["attempt"] for e in errors] == [1, 2]
    assert all("planned failure" in e["error"] for e in errors)
    assert dead.headers["dead_letter"]["msg_id"] == msg_id

    response = operator.get(page(queue), {"source": "dlq"})
    history = re.search(r'<ol class="pgmq-errors">(.*?)</ol>', response.content.decode(), re.S)
    entries = re.findall(r"<li>attempt (\d+).*?planned failure on read (\d+)", history.group(1))
    assert entries == [("1", "1"), ("2", "2"), ("3", "3")]  # two retries, then dead-lettered
    manager.drop_queue(queue + "_dlq")


def test_hide_failed_keeps_the_newest_entries_and_leaves_odd_headers_alone(
    queue, manager, internal
):
    kept = manager.send(queue, {"n": 1})
    odd = manager.send(queue, {"n": 2}, headers={"attempt_errors": "not a list"})
    for i in range(25):
        internal.hide_failed(queue, kept, 0, f"error {i}")
    internal.hide_failed(queue, odd, 0, "ignored")
    by_id = {m.msg_id: m for m in internal.browse_messages(queue)}
    errors = by_id[kept].headers["attempt_errors"]
    assert [e["error"] for e in errors] == [f"error {i}" for i in range(5, 25)]
    assert by_id[odd].headers == {"attempt_errors": "not a list"}


def test_handler_durations_are_recorded_and_shown_per_queue(operator, queue):
    timings = Timings()
    for ms in range(1, 101):
        timings.add(queue, ms / 1000)
    assert record_timings("default", timings, retention=WEEK) == 1
    assert timings.drain() == {}
    durations = handler_durations("default", queue)
    assert durations.calls == 100
    assert 49 <= durations.p50_ms <= 52 and 94 <= durations.p95_ms <= 96
    shown = text(operator.get(page(queue)))
    assert "handler p50 / p95, last hour" in shown and "50 ms / 95 ms" in shown


def test_a_worker_records_its_handler_durations(queue, manager):
    manager.send_batch(queue, [{"n": i} for i in range(3)])
    consume(queue)
    [row] = HandlerTiming.objects.filter(queue=queue)
    assert row.calls == 3 and row.p95_ms >= row.p50_ms > 0
