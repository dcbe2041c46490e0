"""The options of an enqueue, declared once for every face that takes them.

``JobQueue.enqueue``, ``SyncJobQueue.enqueue`` and the tenant views take them as
``**options: Unpack[EnqueueOptions]``; a cron (``Cron(options=...)``,
``JobRegistry.cron(**options)``) takes ``CronOptions``, the same less the idempotency
key, which its tick sets, the parents, which a schedule cannot name, and debouncing,
which a schedule's ticks would only merge.
``EnqueueRequest`` has one field per option, so an option added here and not there fails
``tests/core/test_options.py``.

    queue            the queue to send to (default: the handler's, else the producer's)
    idempotency_key  at most one job per key (and tenant) while its record is kept
    tenant           whose job it is: keys, listing and FIFO groups are per tenant
    group            a FIFO message group, run one at a time in enqueue order
    delay            seconds (or a timedelta) before it may run
    run_at           when it may run (timezone-aware); not with ``delay``
    priority         higher runs first where the store orders by it (memory store)
    max_attempts     attempts before it is dead (default: the handler's, else the producer's)
    timeout          seconds a run may take before it is cancelled and retried
    lease            seconds a claim holds the job between heartbeats
    labels           free-form tags kept on the record (``core.fields``)
    after            ids of parent jobs: it waits until every one has completed
    debounce_key     one job per key (and tenant) until it starts, with the last payload
    debounce         seconds (or a timedelta) after a burst's last enqueue that it runs
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, TypedDict

from .requests import ENQUEUE_OPTIONS, EnqueueRequest


class CronOptions(TypedDict, total=False):
    """What a cron's ticks are enqueued with: every enqueue option but the key."""

    queue: str | None
    tenant: str | None
    group: str | None
    delay: float | timedelta | None
    run_at: datetime | None
    priority: int
    max_attempts: int | None
    timeout: float | timedelta | None
    lease: float | timedelta | None
    labels: Mapping[str, str] | None


class EnqueueOptions(CronOptions, total=False):
    """The keyword options of ``enqueue()`` (see the module docstring for each)."""

    idempotency_key: str | None
    after: Sequence[str] | None
    debounce_key: str | None
    debounce: float | timedelta | None


def enqueue_request(where: str, name: str, payload: Any, options: EnqueueOptions) -> EnqueueRequest:
    """The request ``where`` (``"enqueue()"``) was called for; an unknown option is a
    ``TypeError`` naming the allowed ones, raised before anything is written."""
    unknown = sorted(set(options) - ENQUEUE_OPTIONS)
    if unknown:
        raise TypeError(
            f"{where} got unexpected options {unknown}: allowed are {sorted(ENQUEUE_OPTIONS)}"
        )
    return EnqueueRequest(name, payload, **options)
