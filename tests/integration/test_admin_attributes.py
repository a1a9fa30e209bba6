"""The admin's queue attributes: shown and edited on the queue page; a dead-letter queue
redriven back to its source (all, or the messages matching a filter)."""

from __future__ import annotations

import threading

import pytest

from django_pgmq import QueueManager
from tests.integration.test_admin_views import ALL_PERMS, login, page, text


@pytest.fixture
def operator(client, transactional_db):
    login(client, *ALL_PERMS)
    return client


@pytest.fixture
def dlq(manager, queue):
    """The dead-letter queue of ``queue`` (max_receive_count 1), dropped after the test."""
    name = queue + "_dlq"
    manager.set_queue_attributes(queue, max_receive_count=1, dead_letter_queue=name)
    yield name
    manager.drop_queue(name)


def dead_letter(manager: QueueManager, queue: str, messages: list[dict]) -> None:
    """Send ``messages`` and read them twice: the second read moves them."""
    manager.send_batch(queue, messages)
    manager.read(queue, vt=0, qty=len(messages))
    assert manager.read(queue, vt=0, qty=len(messages)) == []


def test_the_queue_page_shows_the_attributes(operator, queue, manager):
    assert "This queue has no attributes." in text(operator.get(page(queue, "change/")))
    manager.set_queue_attributes(queue, deduplication_window=300, priorities=True)
    body = text(operator.get(page(queue, "change/")))
    assert "deduplication_window" in body and "300" in body and "priorities" in body


def test_saving_the_form_sets_and_removes_attributes(operator, queue, manager):
    manager.set_queue_attributes(queue, priorities=True, paused=True)
    form = {"delivery_delay": "10", "max_message_size": "2048", "deduplication_window": ""}
    response = operator.post(page(queue, "attributes/"), form, follow=True)
    assert f"Saved the attributes of {queue}" in text(response)
    # priorities unticked: removed; paused is not on the form: kept
    assert manager.get_queue_attributes(queue) == {
        "delivery_delay": 10,
        "max_message_size": 2048,
        "paused": True,
    }


def test_the_form_takes_and_shows_values_as_the_command_line_does(operator, queue, manager):
    """One parser and one format: ``100/1m`` and ``5m`` typed in the admin are what
    pgmq_attributes takes, and the page shows the rate as ``100/1m`` (never a repr)."""
    form = {"rate_limit": "100/1m", "delivery_delay": "5m", "max_message_size": "1KiB"}
    response = operator.post(page(queue, "attributes/"), form, follow=True)
    assert f"Saved the attributes of {queue}" in text(response)
    assert manager.get_queue_attributes(queue) == {
        "rate_limit": {"count": 100, "seconds": 60},
        "delivery_delay": 300,
        "max_message_size": 1024,
    }
    body = operator.get(page(queue, "change/")).content.decode()
    assert "<td>100/1m</td>" in body and 'value="100/1m"' in body
    assert "&#x27;count&#x27;" not in body and "{&quot;count" not in body


@pytest.mark.parametrize(
    ("form", "says"),
    [
        ({"delivery_delay": "-1"}, "Delivery delay"),
        ({"rate_limit": "100"}, "must be COUNT/DURATION"),
        ({"max_receive_count": "3"}, "go together"),
        ({"max_receive_count": "3", "dead_letter_queue": "a;b"}, "dead_letter_queue"),
    ],
)
def test_a_bad_value_saves_nothing_and_says_why(operator, queue, manager, form, says):
    manager.set_queue_attributes(queue, priorities=True)
    response = operator.post(page(queue, "attributes/"), {"priorities": "on", **form}, follow=True)
    assert "Attributes not saved" in text(response) and says in text(response)
    assert manager.get_queue_attributes(queue) == {"priorities": True}


def test_redrive_moves_the_matching_dead_letters_back(operator, queue, manager, dlq):
    dead_letter(manager, queue, [{"n": 1, "kind": "a"}, {"n": 2, "kind": "b"}])
    body = text(operator.get(page(dlq, "change/")))
    assert f"This is the dead-letter queue of {queue}" in body
    response = operator.post(page(dlq, "redrive/"), {"contains": '{"kind": "b"}'}, follow=True)
    assert f"Redrove dead letters of {dlq}: 1 → {queue}" in text(response)
    assert [m.message for m in manager.read(queue, vt=30, qty=5)] == [{"n": 2, "kind": "b"}]
    response = operator.post(page(dlq, "redrive/"), {"contains": ""}, follow=True)
    assert f"1 → {queue}" in text(response)
    assert manager.metrics(dlq).queue_length == 0


def test_a_bad_redrive_filter_moves_nothing(operator, queue, manager, dlq):
    dead_letter(manager, queue, [{"n": 1}])
    response = operator.post(page(dlq, "redrive/"), {"contains": "[1]"}, follow=True)
    assert "Nothing redriven" in text(response)
    assert manager.metrics(dlq).queue_length == 1


def test_two_concurrent_redrives_move_each_dead_letter_once(queue, manager, dlq):
    dead_letter(manager, queue, [{"n": n} for n in range(30)])
    moved: list[dict[str, int]] = []

    def redrive() -> None:
        moved.append(QueueManager().redrive(dlq))

    threads = [threading.Thread(target=redrive) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert sum(n for m in moved for n in m.values()) == 30
    assert sorted(m.message["n"] for m in manager.read(queue, vt=30, qty=50)) == list(range(30))


def test_get_goes_to_the_queue_page(operator, queue):
    for action in ("attributes/", "redrive/"):
        response = operator.get(page(queue, action))
        assert (response.status_code, response["Location"]) == (302, page(queue))


def test_a_value_refused_by_its_kind_says_why_in_the_admins_language(
    operator, queue, manager, settings
):
    settings.LANGUAGE_CODE = "de"
    response = operator.post(page(queue, "attributes/"), {"rate_limit": "100"}, follow=True)
    assert "muss ANZAHL/DAUER sein, etwa 100/1m" in text(response)
    assert manager.get_queue_attributes(queue) == {}
