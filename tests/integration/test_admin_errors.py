"""No action answers a 500 or an empty 405; names lead to their page."""

from __future__ import annotations

import re

import pytest
from django.contrib.messages import get_messages

from . import test_admin_views
from .test_admin_views import ADMIN, ALL_PERMS, login, page, text

manager = test_admin_views.manager  # the same rolled-back-transaction fixture


@pytest.fixture
def operator(client, db):
    login(client, *ALL_PERMS)
    return client


def shown(response) -> str:
    """The messages the request left for the page, and the page's text."""
    notes = " ".join(str(m) for m in get_messages(response.wsgi_request))
    return f"{notes} {text(response)}"


@pytest.mark.parametrize(
    ("attributes", "form", "error"),
    [
        ({"max_message_size": 10}, {"message": '{"a": "far too long"}'}, "max_message_size"),
        ({"priorities": True}, {"message": "1", "headers": '{"priority": "high"}'}, "priority"),
        (
            {"deduplication_window": 60},
            {"message": "1", "headers": '{"deduplication_id": ""}'},
            "deduplication_id",
        ),
    ],
    ids=["too-large", "priority-not-a-number", "empty-deduplication-id"],
)
def test_send_refused_by_the_queue_shows_the_error_with_the_form_kept(
    operator, queue, manager, attributes, form, error
):
    manager.set_queue_attributes(queue, **attributes)
    response = operator.post(page(queue, "send/"), {"delay": "0", "headers": "", **form})
    assert response.status_code == 200
    html = response.content.decode()
    assert 'id="pgmq-send" open' in html  # the form is open, with what the user typed
    assert "Not sent:" in text(response) and error in text(response)
    assert "far too long" in html or "priority" in html or "deduplication_id" in html
    assert manager.metrics(queue).queue_length == 0


def test_attributes_refused_by_sql_keep_the_form(operator, queue):
    response = operator.post(
        page(queue, "attributes/"),
        {"max_receive_count": "3", "dead_letter_queue": queue},  # its own dead-letter queue
    )
    assert response.status_code == 200
    assert "Attributes not saved" in shown(response)
    assert f'value="{queue}"' in response.content.decode()  # what the user typed, kept


def test_a_message_action_the_library_refuses_is_a_message(operator, queue):
    response = operator.post(
        page(queue, "messages/"), {"action": "archive", "source": "live", "ids": [str(2**63)]}
    )
    assert response.status_code == 302
    assert "Nothing done: msg_id must be between 1 and" in shown(response)


@pytest.mark.parametrize(
    ("action", "form"),
    [
        ("send/", {"message": "{", "delay": "-1"}),
        ("messages/", {"action": "archive", "source": "live", "ids": [str(2**63)]}),
        ("messages/", {"action": "explode", "source": "nowhere"}),
        ("notify/", {"enabled": "on", "throttle_ms": "-5"}),
        ("notify/", {"enabled": "on", "throttle_ms": str(2**40)}),
        ("pause/", {"paused": "maybe"}),
        ("attributes/", {"max_receive_count": "zero", "priorities": "x"}),
        ("redrive/", {"contains": "[not json"}),
        ("purge/", {"db": "nowhere"}),
        ("delete/", {"db": "nowhere"}),
        ("bulk/", {"bulk_action": "explode", "source": "live"}),
        ("bulk/", {"bulk_action": "move", "source": "live", "target": "a b"}),
    ],
)
def test_every_action_answers_bad_input_without_a_500(operator, queue, action, form):
    response = operator.post(page(queue, action), form)
    assert response.status_code in (200, 302, 404), response.status_code
    if response.status_code != 404:
        assert shown(response).strip()


@pytest.mark.parametrize(
    "action", ["send/", "messages/", "notify/", "pause/", "attributes/", "redrive/"]
)
def test_a_get_of_an_action_goes_to_the_queue_page(operator, queue, action):
    response = operator.get(page(queue, action))
    assert (response.status_code, response["Location"]) == (302, page(queue))


def test_a_queue_address_without_change_goes_to_its_page(operator, queue):
    response = operator.get(page(queue, ""))
    assert (response.status_code, response["Location"]) == (302, page(queue))


def test_a_missing_queue_address_is_the_404_page(operator):
    assert operator.get(page("t_no_such_queue", "")).status_code == 404


def test_another_spelling_of_a_queue_redirects_to_the_stored_name(operator, manager, db):
    manager.create_queue("t_orders")
    response = operator.get(page("T_Orders") + "?source=archive")
    assert response.status_code == 302
    assert response["Location"] == page("t_orders") + "?source=archive"


def test_the_create_form_names_the_space_and_the_non_ascii_character(operator):
    response = operator.post(f"{ADMIN}add/", {"name": "ord'ers ✓"})
    assert response.status_code == 200
    assert "a space" in text(response) and "✓" in text(response)


@pytest.fixture
def other_not_migrated(scratch):
    """The "other" alias pointed at an empty database (django_pgmq not migrated there)."""
    from django.db import connections
    from psycopg.conninfo import conninfo_to_dict

    wrapper = connections["other"]
    saved = dict(wrapper.settings_dict)
    wrapper.close()
    wrapper.settings_dict["NAME"] = conninfo_to_dict(scratch.dsn)["dbname"]
    yield
    wrapper.close()
    wrapper.settings_dict.clear()
    wrapper.settings_dict.update(saved)


@pytest.mark.django_db(transaction=True, databases=["default", "other"])
def test_a_database_without_django_pgmq_says_how_to_migrate_it(client, other_not_migrated):
    """One plain line with the command, no SQL error."""
    login(client, *ALL_PERMS)
    for address in (ADMIN, page("orders"), f"{ADMIN}workers/"):
        response = client.get(address, {"db": "other"})
        assert response.status_code == 200
        line = re.search(r'id="pgmq-not-migrated">(.*?)</p>', response.content.decode()).group(1)
        assert re.sub(r"<[^>]+>", "", line) == (
            "django_pgmq is not migrated in database other: run manage.py migrate --database other."
        )
        assert "relation" not in text(response) and "does not exist" not in text(response)
