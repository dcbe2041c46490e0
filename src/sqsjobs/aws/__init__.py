"""sqsjobs on AWS: ``SqsJobStore`` keeps jobs in SQS (delivery) and DynamoDB (the record).

Importing this package loads boto3 but never aioboto3 or aiohttp: the asyncio clients
are opened on the store's first async call, so blocking producers stay light. The
operator calls' value types load with their flows, on first use.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from ._store import SqsJobStore

if TYPE_CHECKING:
    from ._dead_letters import DeadLetter
    from ._operations import RedriveReport
    from ._reconcile import ReconcileReport
    from ._stats import QueueStats

__all__ = ["DeadLetter", "QueueStats", "ReconcileReport", "RedriveReport", "SqsJobStore"]

_LAZY = {
    "DeadLetter": "._dead_letters",
    "QueueStats": "._stats",
    "ReconcileReport": "._reconcile",
    "RedriveReport": "._operations",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))
