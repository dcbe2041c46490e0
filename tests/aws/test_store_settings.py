"""``StoreSettings``: SqsJobStore's configuration as one value, declared once.

``SqsJobStore``'s keywords are the fields of ``StoreSettings``, so the two lists cannot
drift; ``settings=`` and the keywords build equal values, and ``from_env`` reads the
settings the fields name.
"""

from __future__ import annotations

import dataclasses
import inspect
import time
import typing
from typing import Any

import pytest

from sqsjobs.aws import SqsJobStore, StoreSettings
from sqsjobs.aws.store import config

# One of each setting, none at its default (``clock`` too), all valid without a request.
GIVEN: dict[str, Any] = {
    "table_name": "jobs",
    "queue_urls": {"default": "https://sqs.example/1/jobs", "high": "https://sqs.example/1/h"},
    "dead_letter_queue_urls": {"default": "https://sqs.example/1/dlq"},
    "endpoint_url": "http://127.0.0.1:9",
    "region_name": "eu-west-1",
    "retention": 3600,
    "dead_retention": 7200.0,
    "wait_time": 5,
    "resend_after": 30.0,
    "clock_skew": 1.5,
    "priority_lanes": {"default": {5: "https://sqs.example/1/lane"}},
    "index_shards": 8,
    "clock": time.monotonic,
    "connect_timeout": 2.0,
    "max_attempts": 2,
    "record_format": 2,
    "lean": True,
    "session": None,
    "aio_session": None,
    "config": None,
}


def keyword_form() -> inspect.Signature:
    """The constructor's keyword form (its other form takes ``settings=`` alone)."""
    forms = [inspect.signature(f) for f in typing.get_overloads(SqsJobStore.__init__)]
    [keywords] = [form for form in forms if "settings" not in form.parameters]
    return keywords


def test_every_keyword_of_the_store_is_a_setting_and_every_setting_a_keyword() -> None:
    parameters = {p.name: p for p in keyword_form().parameters.values() if p.name != "self"}
    fields = {f.name: f for f in dataclasses.fields(StoreSettings)}
    assert sorted(parameters) == sorted(fields)
    assert set(GIVEN) == set(fields)  # the test below gives every one
    for name, parameter in parameters.items():
        field = fields[name]
        assert parameter.kind is inspect.Parameter.KEYWORD_ONLY, name
        assert parameter.annotation == field.type, name
        required = field.default is dataclasses.MISSING
        assert (parameter.default is inspect.Parameter.empty) is required, name


def test_the_spec_keywords_keep_their_defaults() -> None:
    """SPEC §3's signature, and its amendments: the defaults callers rely on."""
    defaults = StoreSettings(table_name="jobs", queue_urls={"default": "https://q"})
    assert (defaults.dead_letter_queue_urls, defaults.endpoint_url, defaults.region_name) == (
        None,
        None,
        None,
    )
    assert (defaults.retention, defaults.dead_retention, defaults.wait_time) == (
        86_400,
        14 * 86_400,
        20.0,
    )
    assert (defaults.resend_after, defaults.clock_skew, defaults.clock) == (60.0, 2.0, time.time)
    assert (defaults.session, defaults.aio_session, defaults.config, defaults.lean) == (
        None,
        None,
        None,
        None,
    )


def test_settings_and_keywords_build_equal_settings() -> None:
    settings = StoreSettings(**GIVEN)
    with SqsJobStore(settings=settings) as given, SqsJobStore(**GIVEN) as built:
        assert given.settings == built.settings == settings
        assert given.settings is settings
        assert given._state.layout == built._state.layout
        assert given._state.endpoint == built._state.endpoint
        assert given._state.clock is time.monotonic


def test_a_settings_value_is_a_checked_copy() -> None:
    urls = {"default": "https://sqs.example/1/jobs"}
    settings = StoreSettings(table_name="jobs", queue_urls=urls, retention=60)
    urls["other"] = "https://sqs.example/1/other"
    assert dict(settings.queue_urls) == {"default": "https://sqs.example/1/jobs"}
    assert settings.retention == 60.0 and isinstance(settings.retention, float)
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.wait_time = 1.0  # type: ignore[misc]
    with pytest.raises(ValueError, match="wait_time"):
        dataclasses.replace(settings, wait_time=21)
    assert dataclasses.replace(settings, wait_time=1).wait_time == 1.0


@pytest.mark.parametrize(
    ("arguments", "says"),
    [
        ({"table_name": ""}, "table_name must be a non-empty str"),
        ({"queue_urls": {}}, "queue_urls must name at least one queue"),
        ({"index_shards": 0}, "index_shards must be an int from 1 to 256"),
        ({"record_format": 9}, "record_format must be 1, 2 or 3"),
        ({"priority_lanes": {"other": {1: "https://l"}}}, "not one of default"),
        ({"max_attempts": 0}, "max_attempts must be"),
        ({"lean": "yes"}, "lean must be True or False"),
    ],
)
def test_a_settings_value_refuses_what_the_store_refuses(
    arguments: dict[str, Any], says: str
) -> None:
    base: dict[str, Any] = {"table_name": "jobs", "queue_urls": {"default": "https://q"}}
    with pytest.raises(ValueError, match=says):
        StoreSettings(**(base | arguments))
    with pytest.raises(ValueError, match=says):
        SqsJobStore(**(base | arguments))


def test_settings_come_alone() -> None:
    settings = StoreSettings(table_name="jobs", queue_urls={"default": "https://q"})
    with pytest.raises(TypeError, match="not both; got wait_time"):
        SqsJobStore(settings=settings, wait_time=1.0)  # type: ignore[call-overload]
    with pytest.raises(ValueError, match="settings must be a StoreSettings, got dict"):
        SqsJobStore(settings={"table_name": "jobs"})  # type: ignore[call-overload]


def test_from_env_reads_each_setting_its_field_names(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment mapping is the fields' ``Source``s, iterated: every variable read."""
    text = {
        "table_name": "jobs",
        "queue_urls": "default=https://sqs.example/1/jobs,high=https://sqs.example/1/h",
        "dead_letter_queue_urls": "default=https://sqs.example/1/dlq",
        "priority_lanes": "default@5=https://sqs.example/1/lane",
        "index_shards": "8",
        "record_format": "2",
    }
    assert set(text) == set(config.SOURCES)
    for name, value in text.items():
        monkeypatch.setenv(config.SOURCES[name].env, value)
    from_env = {name: GIVEN[name] for name in text}
    assert config.env_arguments() == from_env
    with SqsJobStore.from_env(endpoint_url="http://127.0.0.1:9") as store:
        assert store.settings == StoreSettings(**from_env, endpoint_url="http://127.0.0.1:9")


def test_the_stack_outputs_are_the_sources_outputs() -> None:
    outputs = {source.output for source in config.SOURCES.values()}
    assert outputs == {
        "TableName",
        "QueueUrls",
        "DeadLetterQueueUrls",
        "PriorityLaneUrls",
        "IndexShards",
        "RecordFormat",
    }
    assert config.STACK_OUTPUTS == ("TableName", "QueueUrls")
