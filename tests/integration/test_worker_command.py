"""pgmq_consume in-process: clear errors before starting, and a full run on the test database."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

import django_pgmq as pgmq
from django_pgmq.models import QueueConfig, Worker
from example_project.demo.models import HandlerRun


def consume(*args: str, **options) -> None:
    call_command("pgmq_consume", *args, verbosity=0, **options)


def test_a_queue_without_handler_is_refused_with_the_way_to_fix_it(queue):
    with pytest.raises(CommandError, match=rf"no handler for queue '{queue}'.*--handler"):
        consume(queue)


def test_a_missing_queue_is_refused(db):
    with pytest.raises(CommandError, match='queue "t_nowhere" does not exist'):
        consume("t_nowhere", handler="tests.handlers.handle")


def test_a_handler_that_does_not_import_is_refused(queue):
    with pytest.raises(CommandError, match=r"cannot import handler 'tests\.handlers\.nope'"):
        consume(queue, handler="tests.handlers.nope")


@pytest.mark.parametrize(
    ("option", "value"),
    [
        ("--batch", "0"),
        ("--poll-interval", "0"),
        ("--max-receives", "-1"),
        ("--max-reads", "-1"),
        ("--vt", "x"),
    ],
)
def test_bad_option_values_are_refused(queue, option, value):
    with pytest.raises(CommandError, match=option.lstrip("-").replace("-", "[-_]")):
        call_command("pgmq_consume", queue, option, value, handler="tests.handlers.handle")


def test_a_dead_letter_queue_named_like_the_queue_is_refused(queue):
    with pytest.raises(CommandError, match="cannot be its own dead-letter queue"):
        consume(queue, handler="tests.handlers.handle", dead_letter=queue)


def test_a_run_until_empty_handles_everything_and_records_its_settings(queue):
    ids = pgmq.send_batch(queue, [{"n": i} for i in range(7)])
    QueueConfig.objects.create(
        queue=queue, batch=3, vt=45, max_receive_count=2
    )  # as the admin would
    consume(
        queue,
        handler="tests.handlers.handle",
        until_empty=True,
        poll_interval=0.05,
        max_receive_count=4,
        delete=True,
    )

    assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == ids
    assert pgmq.metrics(queue).queue_length == 0
    assert pgmq.QueueManager().archive_count(queue) == 0  # --delete
    config = QueueConfig.objects.get(queue=queue)
    # The command line wins over the stored row, which wins over the defaults.
    assert (config.max_receive_count, config.batch, config.vt, config.on_success) == (
        4,
        3,
        45,
        "delete",
    )
    assert not Worker.objects.exists()


def test_the_deprecated_max_reads_option_still_sets_max_receive_count_with_a_warning(queue):
    """--max-reads is the old spelling of --max-receives, kept with a warning."""
    pgmq.send(queue, {"n": 1})
    err = io.StringIO()
    with pytest.warns(DeprecationWarning, match="--max-reads is deprecated: use --max-receives"):
        call_command(
            "pgmq_consume",
            queue,
            "--max-reads",
            "4",
            handler="tests.handlers.handle",
            until_empty=True,
            verbosity=0,
            stderr=err,
        )
    assert "--max-reads is deprecated: use --max-receives" in err.getvalue()
    assert QueueConfig.objects.get(queue=queue).max_receive_count == 4
    assert pgmq.QueueManager().get_queue_attributes(queue)["max_receive_count"] == 4


def test_both_spellings_of_max_receives_are_refused(queue):
    with pytest.raises(CommandError, match="--max-reads is the deprecated spelling of --max-rec"):
        call_command(
            "pgmq_consume",
            queue,
            "--max-reads",
            "4",
            "--max-receives",
            "3",
            handler="tests.handlers.handle",
        )


def test_max_messages_stops_after_that_many(queue):
    pgmq.send_batch(queue, [{"n": i} for i in range(10)])
    consume(queue, handler="tests.handlers.handle", max_messages=4, batch=3, no_listen=True)
    assert HandlerRun.objects.count() == 4
    assert pgmq.metrics(queue).queue_length == 6
    assert len(pgmq.read(queue, vt=30, qty=10)) == 6  # nothing held back


def test_poison_and_undecodable_messages_are_dead_lettered_at_once(queue, manager):
    ok = pgmq.send(queue, {"n": 7})
    undecodable = pgmq.send(queue, {"text": "no number"})
    poison = pgmq.send(queue, {"n": 8, "poison": True})
    consume(queue, handler="tests.handlers.handle_number", until_empty=True, poll_interval=0.05)

    letters = pgmq.read(f"{queue}_dlq", vt=30, qty=10)
    origins = {m.headers["dead_letter"]["msg_id"]: m.headers["dead_letter"] for m in letters}
    assert sorted(origins) == [undecodable, poison]
    assert origins[undecodable]["read_ct"] == 1  # not retried
    assert origins[undecodable]["error"].startswith(
        "PoisonMessage: cannot decode the payload: KeyError"
    )
    assert origins[poison]["error"] == "PoisonMessage: this message can never succeed"
    assert list(HandlerRun.objects.values_list("msg_id", flat=True)) == [ok]
    manager.drop_queue(f"{queue}_dlq")


def test_a_batch_handler_gets_whole_batches(queue):
    ids = pgmq.send_batch(queue, [{"n": i} for i in range(12)])
    consume(queue, handler="tests.handlers.handle_batch", until_empty=True, poll_interval=0.05)
    assert sorted(HandlerRun.objects.values_list("msg_id", flat=True)) == ids
    assert pgmq.metrics(queue).queue_length == 0
    assert pgmq.QueueManager().archive_count(queue) == 12


def test_a_default_never_overwrites_the_queues_redrive_attributes(queue, manager, caplog):
    """max_receive_count 2 stays 2 when the worker is given no --max-receives."""
    dead = f"{queue}_strict"
    manager.set_queue_attributes(queue, max_receive_count=2, dead_letter_queue=dead)
    try:
        pgmq.send(queue, {"fail_times": 99})
        with caplog.at_level("WARNING", logger="django_pgmq.worker"):
            consume(
                queue,
                handler="tests.handlers.handle",
                until_empty=True,
                poll_interval=0.05,
                retry_delay=0.01,
            )
        attributes = manager.get_queue_attributes(queue)
        assert (attributes["max_receive_count"], attributes["dead_letter_queue"]) == (2, dead)
        config = QueueConfig.objects.get(queue=queue)
        assert (config.max_receive_count, config.dead_letter_queue) == (2, dead)
        assert HandlerRun.objects.count() == 0  # both reads failed, none recorded
        [moved] = manager.read(dead, vt=0, qty=5)
        assert moved.headers["dead_letter"]["read_ct"] == 2
        assert "differ" not in caplog.text  # nothing explicit on the worker's side
    finally:
        manager.drop_queue(dead)


def test_an_explicit_worker_option_that_differs_from_the_attribute_is_reported(
    queue, manager, caplog
):
    dead = f"{queue}_strict"
    manager.set_queue_attributes(queue, max_receive_count=2, dead_letter_queue=dead)
    try:
        with caplog.at_level("WARNING", logger="django_pgmq.worker"):
            consume(queue, handler="tests.handlers.handle", max_receive_count=4, until_empty=True)
        [line] = [r.getMessage() for r in caplog.records if "differ" in r.getMessage()]
        assert f'queue "{queue}"' in line
        assert "--max-receives 4 vs attribute max_receive_count 2" in line
        attributes = manager.get_queue_attributes(queue)
        assert (attributes["max_receive_count"], attributes["dead_letter_queue"]) == (4, dead)
    finally:
        manager.drop_queue(dead)
