"""The consumer defaults are declared once: the worker's and QueueConfig's come from there."""

from __future__ import annotations

from django_pgmq.consumer_defaults import CONSUMER_DEFAULTS
from django_pgmq.models import QueueConfig
from django_pgmq.worker import config


def test_the_worker_uses_the_declared_defaults():
    assert config.DEFAULTS == CONSUMER_DEFAULTS
    assert set(CONSUMER_DEFAULTS) <= {
        f.name for f in config.QueueSettings.__dataclass_fields__.values()
    }


def test_every_stored_setting_defaults_in_queue_config_to_the_declared_value():
    stored = {
        setting: field for setting, field in config._STORED.items() if setting in CONSUMER_DEFAULTS
    }
    assert stored  # batch, vt, max_receive_count, on_success
    for setting, field in stored.items():
        default = QueueConfig._meta.get_field(field).get_default()
        assert default == CONSUMER_DEFAULTS[setting], setting
