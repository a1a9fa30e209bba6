"""The dashboard's actions: each works, is logged, needs its permission and a CSRF token."""

from __future__ import annotations

import re

import pytest
from django.contrib.admin.models import ADDITION, CHANGE, DELETION, LogEntry
from django.test import Client

from django_pgmq.internal import InternalManager
from django_pgmq.manager import QueueManager

from . import test_admin_views
from .test_admin_views import ADMIN, ALL_PERMS, login, page, text

manager = test_admin_views.manager  # the same rolled-back-transaction fixture
internal = test_admin_views.internal


@pytest.fixture
def operator(client, db) -> Client:
    login(client, *ALL_PERMS)
    return client


def last_log(queue: str) -> LogEntry:
    entry = LogEntry.objects.filter(object_id=queue).order_by("-action_time", "-pk").first()
    assert entry is not None, f"nothing logged for {queue}"
    return entry


def names(manager: QueueManager) -> set[str]:
    return {q.queue_name for q in manager.list_queues()}


# -- actions that work --------------------------------------------------------


def test_send_a_message(operator, queue, manager, internal):
    response = operator.post(
        page(queue, "send/"),
        {"message": '{"order": 42}', "headers": '{"tenant": "acme"}', "delay": "0"},
    )
    assert response.status_code == 302
    [message] = internal.browse_messages(queue)
    assert (message.message, message.headers) == ({"order": 42}, {"tenant": "acme"})
    entry = last_log(queue)
    assert entry.action_flag == CHANGE
    assert f"Sent message {message.msg_id}" in entry.change_message


def test_send_with_a_delay(operator, queue, manager, internal):
    operator.post(page(queue, "send/"), {"message": "[1, 2]", "headers": "", "delay": "3600"})
    [stats] = internal.dashboard_queue_stats(queue)
    assert (stats.queue_length, stats.delayed_length) == (1, 1)


@pytest.mark.parametrize(
    ("form", "error"),
    [
        ({"message": "{oops", "delay": "0"}, "Not valid JSON"),
        ({"message": "null", "delay": "0"}, "JSON null is not allowed as a message"),
        ({"message": "{}", "headers": "[1]", "delay": "0"}, "Must be a JSON object"),
        ({"message": "{}", "delay": "-1"}, "greater than or equal to 0"),
        ({"message": "", "delay": "0"}, "This field is required"),
    ],
)
def test_send_rejects_bad_input_and_shows_why(operator, queue, manager, internal, form, error):
    response = operator.post(page(queue, "send/"), form)
    assert response.status_code == 200
    assert error in text(response)
    assert internal.browse_messages(queue) == []
    assert not LogEntry.objects.filter(object_id=queue).exists()


def test_archive_selected(operator, queue, manager, internal):
    ids = manager.send_batch(queue, [{"n": 1}, {"n": 2}, {"n": 3}])
    response = operator.post(
        page(queue, "messages/"), {"action": "archive", "source": "live", "ids": ids[:2]}
    )
    assert response.status_code == 302
    assert [m.msg_id for m in internal.browse_messages(queue)] == [ids[2]]
    assert sorted(m.msg_id for m in internal.browse_messages(queue, archive=True)) == ids[:2]
    assert "Archive (live): 2 of 2 messages" in last_log(queue).change_message


def test_delete_selected(operator, queue, manager, internal):
    ids = manager.send_batch(queue, [{"n": 1}, {"n": 2}])
    operator.post(page(queue, "messages/"), {"action": "delete", "source": "live", "ids": ids[0]})
    assert [m.msg_id for m in internal.browse_messages(queue)] == [ids[1]]
    assert internal.browse_messages(queue, archive=True) == []
    assert "Delete (live): 1 of 1" in last_log(queue).change_message


def test_make_selected_visible_now(operator, queue, manager):
    msg_id = manager.send(queue, {"n": 1}, delay=3600)
    operator.post(page(queue, "messages/"), {"action": "visible", "source": "live", "ids": msg_id})
    [message] = manager.read(queue, vt=30, qty=5)
    assert message.msg_id == msg_id


def test_requeue_from_the_archive(operator, queue, manager, internal):
    msg_id = manager.send(queue, {"again": True})
    manager.archive(queue, msg_id)
    operator.post(
        page(queue, "messages/"), {"action": "requeue", "source": "archive", "ids": msg_id}
    )
    assert internal.browse_messages(queue, archive=True) == []
    [message] = internal.browse_messages(queue)
    assert (message.message, message.read_ct) == ({"again": True}, 0)


def test_requeue_and_delete_dead_letters(operator, queue, manager, internal):
    dlq = f"{queue}_dlq"
    manager.create_queue(dlq)
    try:
        dead = manager.send_batch(dlq, [{"d": 1}, {"d": 2}])
        operator.post(
            page(queue, "messages/"), {"action": "requeue", "source": "dlq", "ids": dead[0]}
        )
        assert [m.message for m in internal.browse_messages(queue)] == [{"d": 1}]
        operator.post(
            page(queue, "messages/"), {"action": "delete", "source": "dlq", "ids": dead[1]}
        )
        assert internal.browse_messages(dlq) == []
    finally:
        manager.drop_queue(dlq)


def test_an_action_that_does_not_fit_the_list_is_refused(operator, queue, manager, internal):
    msg_id = manager.send(queue, {"n": 1})
    manager.archive(queue, msg_id)
    response = operator.post(
        page(queue, "messages/"),
        {"action": "delete", "source": "archive", "ids": msg_id},
        follow=True,
    )
    assert "does not apply to archive messages" in text(response)
    assert len(internal.browse_messages(queue, archive=True)) == 1


def test_an_action_without_a_selection_does_nothing(operator, queue, manager, internal):
    manager.send(queue, {"n": 1})
    response = operator.post(
        page(queue, "messages/"), {"action": "archive", "source": "live"}, follow=True
    )
    assert "Nothing done" in text(response)
    assert len(internal.browse_messages(queue)) == 1


def test_purge_asks_with_the_count_then_purges(operator, queue, manager, internal):
    manager.send_batch(queue, [{"n": i} for i in range(3)])
    confirm = operator.get(page(queue, "purge/"))
    assert confirm.status_code == 200
    assert re.search(r'id="pgmq-count">\s*3\s*<', confirm.content.decode())
    assert internal.browse_messages(queue) != []  # asking changes nothing
    response = operator.post(page(queue, "purge/"))
    assert response.status_code == 302
    assert internal.browse_messages(queue) == []
    assert last_log(queue).change_message == "Purged 3 messages"


def test_notifications_on_and_off(operator, queue, manager):
    operator.post(page(queue, "notify/"), {"enabled": "on", "throttle_ms": "100"})
    assert manager.notify_throttles()[queue] == 100
    assert "on (100 ms throttle)" in text(operator.get(page(queue)))
    operator.post(page(queue, "notify/"), {})
    assert queue not in manager.notify_throttles()
    assert last_log(queue).change_message == "Disabled insert notifications"


def test_create_a_queue(operator, manager, queue_name):
    response = operator.post(ADMIN + "add/", {"name": queue_name, "unlogged": "on"})
    try:
        assert response.status_code == 302
        [info] = [q for q in manager.list_queues() if q.queue_name == queue_name]
        assert info.is_unlogged
        assert last_log(queue_name).action_flag == ADDITION
    finally:
        manager.drop_queue(queue_name)


@pytest.mark.parametrize(
    ("name", "error"),
    [
        ("bad name", "is invalid"),
        ("x" * 48, "at most 47 characters"),
        ("a--b", "invalid characters"),
    ],
)
def test_create_refuses_bad_names(operator, manager, name, error):
    before = names(manager)
    response = operator.post(ADMIN + "add/", {"name": name})
    assert response.status_code == 200
    assert error in text(response)
    assert names(manager) == before


def test_create_refuses_an_existing_name_in_any_case(operator, queue, manager):
    response = operator.post(ADMIN + "add/", {"name": queue.upper()})
    assert "already exists" in text(response)
    assert queue.upper() not in names(manager)


def test_drop_asks_then_drops(operator, manager, queue_name):
    manager.create_queue(queue_name)
    manager.send(queue_name, {"n": 1})
    confirm = operator.get(page(queue_name, "delete/"))
    assert f"Yes, drop {queue_name}" in confirm.content.decode()
    assert queue_name in names(manager)
    response = operator.post(page(queue_name, "delete/"))
    assert response.status_code == 302
    assert queue_name not in names(manager)
    assert last_log(queue_name).action_flag == DELETION


# -- permissions: 403 and nothing changed -------------------------------------


def _state(manager: QueueManager, queue: str) -> tuple:
    internal = InternalManager(manager.using)
    live = internal.browse_messages(queue, newest_first=False)
    archived = internal.browse_messages(queue, archive=True, newest_first=False)
    return (
        names(manager),
        [(m.msg_id, m.vt) for m in live],
        [m.msg_id for m in archived],
        manager.notify_throttles().get(queue),
    )


FORBIDDEN = [
    ("send", "post", "send/", {"message": "{}", "delay": "0"}),
    ("archive", "post", "messages/", {"action": "archive", "source": "live"}),
    ("visible", "post", "messages/", {"action": "visible", "source": "live"}),
    ("delete", "post", "messages/", {"action": "delete", "source": "live"}),
    ("requeue", "post", "messages/", {"action": "requeue", "source": "archive"}),
    ("purge page", "get", "purge/", {}),
    ("purge", "post", "purge/", {}),
    ("drop page", "get", "delete/", {}),
    ("drop", "post", "delete/", {}),
    ("notify", "post", "notify/", {"enabled": "on"}),
]
NEEDS = {
    "send": "change_queue",
    "archive": "change_queue",
    "visible": "change_queue",
    "requeue": "change_queue",
    "notify": "change_queue",
    "delete": "delete_queue",
    "drop page": "delete_queue",
    "drop": "delete_queue",
    "purge page": "purge_queue",
    "purge": "purge_queue",
}


@pytest.mark.parametrize(
    ("label", "method", "suffix", "data"), FORBIDDEN, ids=[f[0] for f in FORBIDDEN]
)
def test_each_action_needs_its_permission(client, db, queue, manager, label, method, suffix, data):
    ids = manager.send_batch(queue, [{"n": 1}, {"n": 2}], delay=60)
    manager.archive(queue, ids[1])
    login(client, *(p for p in ALL_PERMS if p != NEEDS[label]))
    before = _state(manager, queue)
    response = getattr(client, method)(page(queue, suffix), {**data, "ids": ids})
    assert response.status_code == 403
    assert _state(manager, queue) == before
    assert not LogEntry.objects.exists()


def test_create_needs_the_add_permission(client, db, manager, queue_name):
    login(client, *(p for p in ALL_PERMS if p != "add_queue"))
    assert client.get(ADMIN + "add/").status_code == 403
    assert client.post(ADMIN + "add/", {"name": queue_name}).status_code == 403
    assert queue_name not in names(manager)


@pytest.mark.parametrize("path", ["", "workers/"])
def test_pages_need_the_view_permission(client, db, path):
    login(client, "change_queue", "add_queue", "delete_queue", "purge_queue")
    assert client.get(ADMIN + path).status_code == 403


def test_queue_page_needs_the_view_permission(client, db, queue):
    login(client, "change_queue")
    assert client.get(page(queue)).status_code == 403


def test_non_staff_and_anonymous_users_are_sent_to_login(client, db, queue, manager, internal):
    manager.send(queue, {"n": 1})
    for _ in ("anonymous", "non-staff"):
        for url in (ADMIN, page(queue)):
            response = client.get(url)
            assert response.status_code == 302 and "/admin/login/" in response["Location"]
        response = client.post(page(queue, "purge/"))
        assert response.status_code == 302 and "/admin/login/" in response["Location"]
        login(client, *ALL_PERMS, staff=False)
    assert len(internal.browse_messages(queue)) == 1


def test_a_viewer_sees_no_action_controls(client, db, queue, manager):
    manager.send(queue, {"n": 1})
    login(client, "view_queue")
    html = client.get(page(queue)).content.decode()
    for control in ('id="pgmq-send"', 'id="pgmq-purge"', 'id="pgmq-drop"', 'name="ids"'):
        assert control not in html
    assert 'id="pgmq-notify"' not in html


# -- CSRF ----------------------------------------------------------------------


def test_every_form_carries_a_csrf_token(operator, queue, manager):
    manager.send(queue, {"n": 1})
    pages = [page(queue), page(queue, "purge/"), page(queue, "delete/"), ADMIN + "add/"]
    for url in pages:
        html = operator.get(url).content.decode()
        forms = re.findall(r"<form[^>]*method=\"post\".*?</form>", html, re.S)
        assert forms, url
        for form in forms:
            assert 'name="csrfmiddlewaretoken"' in form, (url, form[:80])


@pytest.mark.parametrize(
    ("suffix", "data"),
    [
        ("send/", {"message": "{}", "delay": "0"}),
        ("messages/", {"action": "delete", "source": "live"}),
        ("purge/", {}),
        ("delete/", {}),
        ("notify/", {"enabled": "on"}),
    ],
)
def test_posts_without_a_csrf_token_are_refused(db, queue, manager, suffix, data):
    client = Client(enforce_csrf_checks=True)
    login(client, *ALL_PERMS)
    ids = manager.send_batch(queue, [{"n": 1}])
    before = _state(manager, queue)
    response = client.post(page(queue, suffix), {**data, "ids": ids})
    assert response.status_code == 403
    assert _state(manager, queue) == before
