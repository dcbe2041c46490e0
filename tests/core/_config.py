"""Shared values for the pure tests: a producer configuration and a fixed instant."""

from __future__ import annotations

from typing import Any

from sqsjobs._backoff import Backoff
from sqsjobs._enqueue import QueueConfig

NOW = 1_796_094_741.2439704  # like time.time(): digits a datetime cannot keep


def make_config(store: object | None = None, **overrides: Any) -> QueueConfig:
    options: dict[str, Any] = {
        "default_queue": "default",
        "payload_max_bytes": 65536,
        "default_max_attempts": 5,
        "default_timeout": 30.0,
        "default_lease": 30.0,
        "backoff": Backoff(),
        "clock": lambda: NOW,
    }
    options.update(overrides)
    return QueueConfig.build(object() if store is None else store, **options)
