"""A producer configuration for the pure tests, on a clock fixed at a realistic instant."""

from __future__ import annotations

from typing import Any

from sqsjobs.core.backoff import Backoff
from sqsjobs.producer.enqueue import QueueConfig

from .clock import REALISTIC_START

NOW = REALISTIC_START


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
