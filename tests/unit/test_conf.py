"""PGMQ settings: defaults, and manage.py check naming each bad value."""

import pytest
from django.test import override_settings

from django_pgmq import conf


def _ids(pgmq_setting) -> list[str]:
    with override_settings(PGMQ=pgmq_setting):
        return [error.id for error in conf.check_settings()]


def test_defaults_apply_to_unset_keys():
    with override_settings(PGMQ={}):
        assert conf.get("DATABASE") == "default"
        assert conf.get("SAMPLE_RETENTION_DAYS") == 7
        assert conf.workflow_retention_seconds() == 7 * 86400


def test_workflow_retention_takes_a_timedelta_or_seconds():
    from datetime import timedelta

    assert _ids({"WORKFLOW_RETENTION": timedelta(hours=1)}) == []
    with override_settings(PGMQ={"WORKFLOW_RETENTION": 90}):
        assert conf.workflow_retention_seconds() == 90


def test_valid_settings_pass():
    assert _ids({"DATABASE": "other", "WORKER_HEARTBEAT": 2.5, "METRICS_TOKEN": "x" * 20}) == []


@pytest.mark.parametrize(
    ("setting", "error"),
    [
        ([], "django_pgmq.E001"),
        ({"DATABSE": "default"}, "django_pgmq.E002"),
        ({"DATABASE": "nope"}, "django_pgmq.E003"),
        ({"DATABASE": 3}, "django_pgmq.E005"),
        ({"WORKER_HEARTBEAT": 0}, "django_pgmq.E005"),
        ({"SAMPLE_RETENTION_DAYS": 1.5}, "django_pgmq.E005"),
        ({"DASHBOARD_EXACT_LIMIT": -1}, "django_pgmq.E005"),
        ({"METRICS_TOKEN": "short"}, "django_pgmq.E005"),
        ({"WORKFLOW_RETENTION": -1}, "django_pgmq.E005"),
        ({"WORKFLOW_RETENTION": "7 days"}, "django_pgmq.E005"),
    ],
)
def test_bad_settings_are_reported(setting, error):
    assert error in _ids(setting)


def test_non_postgresql_alias_is_reported(monkeypatch):
    from django.db import connections

    sqlite = {"ENGINE": "django.db.backends.sqlite3", "NAME": ":memory:"}
    monkeypatch.setitem(connections.databases, "lite", sqlite)
    assert "django_pgmq.E004" in _ids({"DATABASE": "lite"})
