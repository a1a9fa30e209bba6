"""PGMQ["QUEUE_DATABASES"] and PGMQ["READ_DATABASE"]: which alias a queue and its views use,
and manage.py check naming each bad value (no database needed)."""

from __future__ import annotations

import pytest
from django.test import override_settings

from django_pgmq import conf, routing
from django_pgmq.errors import InvalidArgument


class Router:
    """A router class (made once): ``b_*`` to "other", the rest left to PGMQ["DATABASE"]."""

    databases = ("other",)

    def db_for_queue(self, queue_name: str) -> str | None:
        return "other" if queue_name.startswith("b_") else None


class Stray:
    def db_for_queue(self, queue_name: str) -> str:
        return "nowhere"


stray = Stray()  # a router object, used as it is


def test_the_first_matching_pattern_wins_and_the_rest_stay_on_database():
    routes = [("b_*", "other"), ("b_x", "default"), ("Exact", "other")]
    with override_settings(PGMQ={"DATABASE": "default", "QUEUE_DATABASES": routes}):
        assert routing.database_for("b_x") == "other"
        assert routing.database_for("Exact") == "other"
        assert routing.database_for("exact") == "default"  # patterns match case-sensitively
        assert routing.database_for("a_b_x") == "default"
        assert routing.queue_databases() == ["default", "other"]
    with override_settings(PGMQ={"DATABASE": "other"}):  # routes read afresh
        assert routing.database_for("b_x") == "other"
        assert routing.queue_databases() == ["other"]


def test_a_router_class_or_object_decides():
    with override_settings(PGMQ={"QUEUE_DATABASES": f"{__name__}.Router"}):
        assert routing.database_for("b_1") == "other"
        assert routing.database_for("a_1") == "default"
        assert routing.queue_databases() == ["default", "other"]
    with override_settings(PGMQ={"QUEUE_DATABASES": f"{__name__}.stray"}):
        with pytest.raises(InvalidArgument, match="returned database alias 'nowhere'"):
            routing.database_for("a_1")
        assert routing.queue_databases() == ["default"]


def test_read_database_names_a_replica_per_database_or_for_the_default():
    with override_settings(PGMQ={"READ_DATABASE": "other"}):
        assert routing.read_database("default") == "other"
        assert routing.read_database("other") == "other"
    with override_settings(PGMQ={"READ_DATABASE": {"other": "default"}}):
        assert routing.read_database("other") == "default"
        assert routing.read_database("default") == "default"
    with override_settings(PGMQ={}):
        assert routing.read_database("other") == "other"


def _errors(pgmq_setting) -> list[tuple[str, str]]:
    with override_settings(PGMQ=pgmq_setting):
        return [(error.id, error.msg) for error in conf.check_settings()]


def test_good_routing_settings_pass():
    assert _errors({"QUEUE_DATABASES": [("b_*", "other")], "READ_DATABASE": "other"}) == []
    assert _errors({"QUEUE_DATABASES": f"{__name__}.Router"}) == []
    assert _errors({"READ_DATABASE": {"other": "default"}, "ALLOW_CROSS_DATABASE_SEND": True}) == []


@pytest.mark.parametrize(
    ("setting", "error", "named"),
    [
        ({"QUEUE_DATABASES": [("b_*",)]}, "django_pgmq.E005", "QUEUE_DATABASES"),
        ({"QUEUE_DATABASES": {"b_*": "other"}}, "django_pgmq.E005", "QUEUE_DATABASES"),
        ({"QUEUE_DATABASES": [("b_*", "nope")]}, "django_pgmq.E003", "route 'b_*'"),
        ({"QUEUE_DATABASES": "no_such.module.Router"}, "django_pgmq.E006", "cannot be imported"),
        ({"QUEUE_DATABASES": "tests.unit.test_routing.pytest"}, "django_pgmq.E006", "no db_for"),
        ({"READ_DATABASE": 3}, "django_pgmq.E005", "READ_DATABASE"),
        ({"READ_DATABASE": "nope"}, "django_pgmq.E003", "READ_DATABASE"),
        ({"READ_DATABASE": {"other": "nope"}}, "django_pgmq.E003", "'nope'"),
        ({"ALLOW_CROSS_DATABASE_SEND": "yes"}, "django_pgmq.E005", "ALLOW_CROSS_DATABASE_SEND"),
    ],
)
def test_bad_routing_settings_are_reported_by_name(setting, error, named):
    found = _errors(setting)
    assert any(kind == error and named in text for kind, text in found), found
