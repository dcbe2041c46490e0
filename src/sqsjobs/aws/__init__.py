"""sqsjobs on AWS: ``SqsJobStore`` keeps jobs in SQS (delivery) and DynamoDB (the record).

The package is four layers, one folder each (see ``docs/explanation/architecture.md``): ``wire``
(the record codec, the message body, request builders and the flow protocol: stdlib
only), ``flows`` (one module per operation family, written once for both drivers),
``store`` (``SqsJobStore``, its blocking face, background work, configuration and
provisioning) and ``transports`` (boto3, aiobotocore).

The public names load on first use: ``SqsJobStore`` brings boto3 but never aiobotocore or
aiohttp (the asyncio clients are opened on the store's first async call), its
configuration ``StoreSettings`` loads no SDK unless given the caller's SDK objects, and
the operator calls' value types load with their flows.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..core.reports import DeadLetter, QueueStats, ReconcileReport, RedriveReport
    from .store.config import StoreSettings
    from .store.sqs_store import SqsJobStore

__all__ = [
    "DeadLetter",
    "QueueStats",
    "ReconcileReport",
    "RedriveReport",
    "SqsJobStore",
    "StoreSettings",
]

_LAZY = {
    "DeadLetter": "..core.reports",
    "QueueStats": "..core.reports",
    "ReconcileReport": "..core.reports",
    "RedriveReport": "..core.reports",
    "SqsJobStore": ".store.sqs_store",
    "StoreSettings": ".store.config",
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
