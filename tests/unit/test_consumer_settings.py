"""The consumer settings are declared once (``consumer_settings``): what derives from the
declaration follows it, and what is typed by hand beside it (`Consumer`, the decorator's
keywords) fails here when it drifts."""

from __future__ import annotations

import inspect
import re
from dataclasses import fields
from typing import get_type_hints

import pytest

from django_pgmq.consumer_settings import CONSUMER_DEFAULTS, SETTINGS
from django_pgmq.errors import InvalidArgument, InvalidQueueName
from django_pgmq.management.commands.pgmq_consume import Command
from django_pgmq.models import QueueConfig
from django_pgmq.sqltools import settings_table
from django_pgmq.worker import config
from django_pgmq.worker.registry import Consumer, check_settings, consumer

# The decorator's keywords that are no setting (each setting has one of its own).
NOT_SETTINGS = {"queue", "batch_handler", "atomic", "decode", "max_reads"}
# A value each setting accepts that is not its default (the dead-letter queue has none).
SAMPLE = {int: 7, float: 2.5, str: None}


def handler(message):
    pass


def sample(setting):
    value = SAMPLE[setting.python_type]
    if setting.is_switch:
        return setting.const
    return value if value is not None else "t_sample_dlq"


def test_the_worker_uses_the_declared_defaults():
    assert config.DEFAULTS == CONSUMER_DEFAULTS
    assert set(CONSUMER_DEFAULTS) == {s.name for s in SETTINGS if s.default is not None}
    assert {"batch", "vt", "max_receive_count", "on_success", "retry_delay"} <= set(
        CONSUMER_DEFAULTS
    )


def test_every_stored_setting_defaults_in_queue_config_to_the_declared_value():
    stored = {s.name: s.stored for s in SETTINGS if s.stored}
    assert stored == config._STORED
    assert {"batch", "vt", "max_receive_count", "on_success", "dead_letter"} <= set(stored)
    for setting, field in stored.items():
        model_field = QueueConfig._meta.get_field(field)  # fails on a field that is not there
        if setting in CONSUMER_DEFAULTS:
            assert model_field.get_default() == CONSUMER_DEFAULTS[setting], setting


def test_consumer_types_every_declared_setting_as_optional():
    hints = get_type_hints(Consumer)
    for setting in SETTINGS:
        assert hints.get(setting.name) == setting.python_type | None, setting.name
        default = {f.name: f.default for f in fields(Consumer)}[setting.name]
        assert default is None, setting.name


def test_the_decorator_has_a_typed_keyword_for_each_declared_setting_and_no_other():
    parameters = inspect.signature(consumer).parameters
    hints = get_type_hints(consumer)
    declared = {s.name for s in SETTINGS}
    assert set(parameters) - NOT_SETTINGS == declared
    for name in declared:
        assert parameters[name].kind is inspect.Parameter.KEYWORD_ONLY, name
        assert parameters[name].default is None, name
        assert hints[name] == next(s.python_type for s in SETTINGS if s.name == name) | None


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_the_decorator_passes_each_setting_to_its_consumer(setting):
    value = sample(setting)
    assert value != setting.default
    decorated = consumer(**{setting.name: value})(handler)
    assert getattr(decorated.pgmq_consumer, setting.name) == value


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_resolve_gives_each_setting_from_the_command_line_and_else_its_default(setting):
    value = sample(setting)
    given = config.resolve("orders", Consumer(handler), {setting.name: value}, None)
    assert getattr(given, setting.name) == value
    default = getattr(config.resolve("orders", Consumer(handler), {}, None), setting.name)
    assert default == (setting.default if setting.default is not None else "orders_dlq")
    assert type(default) is setting.python_type


def test_queue_settings_have_every_declared_setting_with_its_type():
    hints = get_type_hints(config.QueueSettings)
    assert {s.name: s.python_type for s in SETTINGS}.items() <= hints.items()


@pytest.mark.parametrize(
    ("name", "value", "error"),
    [
        ("batch", True, "batch must be an integer of at least 1, got True"),
        ("max_receive_count", 1.5, "max_receive_count must be an integer of at least 0"),
        ("retry_delay", 3601, "retry_delay must be seconds in (0, 3600], got 3601"),
        ("max_retry_delay", 0, "max_retry_delay must be seconds in (0, 86400], got 0"),
        ("max_retry_delay", "60", "max_retry_delay must be seconds in (0, 86400], got '60'"),
        ("on_success", "ARCHIVE", "on_success must be 'archive' or 'delete', got 'ARCHIVE'"),
        ("dead_letter", "bad;name", "invalid characters: $, ;, --, or \\': 'bad;name'"),
    ],
)
def test_check_settings_refuses_a_bad_value_naming_it(name, value, error):
    with pytest.raises((InvalidArgument, InvalidQueueName), match=re.escape(error)):
        check_settings(**{name: value})


def test_check_settings_refuses_a_name_that_is_not_declared():
    with pytest.raises(TypeError, match="not a consumer setting: bacth"):
        check_settings(bacth=3)


@pytest.mark.parametrize("setting", SETTINGS, ids=lambda s: s.name)
def test_each_setting_is_an_option_of_pgmq_consume_with_its_default_in_the_help(setting):
    parser = Command().create_parser("manage.py", "pgmq_consume")
    [action] = [a for a in parser._actions if setting.flag in a.option_strings]
    assert action.dest == setting.dest
    if setting.is_switch:
        given = vars(parser.parse_args(["q", setting.flag]))[setting.dest]
        assert setting.from_option(given) == setting.const
    else:
        value = sample(setting)
        given = vars(parser.parse_args(["q", setting.flag, str(value)]))[setting.dest]
        assert given == value
        assert f"(default: {setting.default_text()})" in action.help
        assert str(setting.shown_default or setting.shown(setting.default)) in action.help


def test_the_worker_guide_table_is_made_from_the_declaration():
    text = settings_table.GUIDE.read_text(encoding="utf-8")
    table = settings_table.table_in(text)
    assert table == settings_table.render(), "run python -m django_pgmq.sqltools.regenerate"
    for setting in SETTINGS:
        [row] = [line for line in table.splitlines() if line.startswith(f"| `{setting.flag}")]
        assert f"`{setting.name}`" in row


def test_a_stale_table_is_caught():
    """The check can fail: a setting missing from the table changes what it must be."""
    assert settings_table.render(SETTINGS[:-1]) != settings_table.render()
