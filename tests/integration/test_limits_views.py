"""max_in_flight and rate_limit around the SQL: the manager, the commands, the admin's form,
overview and queue page, and the Prometheus export show and set them."""

from __future__ import annotations

import json

import pytest

from tests.integration import test_commands
from tests.integration.test_admin_metrics import URL, samples
from tests.integration.test_admin_views import ADMIN, ALL_PERMS, login, page, text
from tests.integration.test_commands import fails, run

created = test_commands.created  # the commands tests' fixture: queues made, then dropped


@pytest.fixture
def operator(client, transactional_db):
    login(client, *ALL_PERMS)
    return client


@pytest.fixture
def limited(manager, queue):
    """``queue`` with max_in_flight 5 and rate_limit 4 per minute, 3 of 10 messages read."""
    manager.set_queue_attributes(queue, max_in_flight=5, rate_limit={"count": 4, "seconds": 60})
    manager.send_batch(queue, [{"n": n} for n in range(10)])
    assert len(manager.read(queue, vt=300, qty=3)) == 3
    return queue


def test_the_manager_reports_the_limits_and_where_they_stand(manager, limited):
    [row] = manager.queue_limits(limited)
    assert (row.max_in_flight, row.in_flight, row.rate_count, row.rate_seconds) == (5, 3, 4, 60)
    assert row.handed_out == 3 and row.next_free_at is None
    assert len(manager.read(limited, vt=300, qty=10)) == 1  # the rate binds first
    [row] = manager.queue_limits(limited)
    assert (row.in_flight, row.handed_out) == (4, 4) and row.next_free_at is not None
    assert limited in {r.queue_name for r in manager.queue_limits()}


def test_bad_values_name_the_key(manager, queue):
    from django_pgmq.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="max_in_flight"):
        manager.set_queue_attributes(queue, max_in_flight=0)
    with pytest.raises(InvalidArgument, match="rate_limit"):
        manager.set_queue_attributes(queue, rate_limit={"count": 3})


def test_pgmq_metrics_shows_the_limits(manager, limited):
    out, _ = run("pgmq_metrics", limited)
    assert "max_in_flight" in out and "3/4" not in out
    line = next(x for x in out.splitlines()[-2:] if x.startswith(limited))
    assert line.split() == [limited, "3", "5", "3", "4/60s"]
    [entry] = json.loads(run("pgmq_metrics", limited, "--json")[0])
    assert entry["limits"]["max_in_flight"] == 5 and entry["limits"]["handed_out"] == 3


def test_commands_set_the_limits(manager, queue, created):
    name = f"{queue}_made"
    created.append(name)
    run("pgmq_create", name, "--max-in-flight", "3", "--rate-limit", "100/1m")
    assert manager.get_queue_attributes(name) == {
        "max_in_flight": 3,
        "rate_limit": {"count": 100, "seconds": 60},
    }
    run("pgmq_attributes", name, "--set", "rate_limit=10/2s", "--set", "max_in_flight=")
    assert manager.get_queue_attributes(name) == {"rate_limit": {"count": 10, "seconds": 2}}
    assert "rate_limit" in fails("pgmq_attributes", name, "--set", "rate_limit=10")


def test_the_admin_shows_and_edits_the_limits(operator, manager, limited):
    body = text(operator.get(page(limited, "change/")))
    assert "3 / 5" in body and "in flight / max_in_flight" in body
    assert "handed out in the last 60 s" in body
    overview = text(operator.get(ADMIN, {"q": limited}))  # its row, whatever else is there
    assert "limit 5" in overview and "3/4 per 60 s" in overview
    form = {"max_in_flight": "2", "rate_limit": "10/2"}
    response = operator.post(page(limited, "attributes/"), form, follow=True)
    assert f"Saved the attributes of {limited}" in text(response)
    assert manager.get_queue_attributes(limited) == {
        "max_in_flight": 2,
        "rate_limit": {"count": 10, "seconds": 2},
    }
    response = operator.post(page(limited, "attributes/"), {"rate_limit": "ten"}, follow=True)
    assert "Rate limit" in text(response)
    operator.post(page(limited, "attributes/"), {}, follow=True)
    assert manager.get_queue_attributes(limited) == {}
    assert manager.queue_limits(limited) == []


def test_prometheus_exports_the_limits(operator, limited):
    found = samples(operator.get(URL).content.decode())
    labels = f'{{database="default",queue="{limited}"}}'
    assert found["pgmq_queue_max_in_flight" + labels] == 5
    assert found["pgmq_queue_limit_in_flight" + labels] == 3
    assert found["pgmq_queue_rate_limit_count" + labels] == 4
    assert found["pgmq_queue_rate_limit_seconds" + labels] == 60
    assert found["pgmq_queue_rate_limit_handed_out" + labels] == 3
