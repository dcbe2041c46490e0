"""``redrive``, the operator's call that runs every dead job of a queue again, and which
capabilities each store has: those the dashboard and the worker look for
(``sqsjobs.store``), and the calls only ``SqsJobStore``'s own users make
(``capabilities.py``), on each face.

On ``SqsJobStore`` a redrive reads the dead-letter queues (where a dead job's copy
waits); on ``MemoryJobStore``, which has none, the dead records. Either way the jobs it
names come back queued with their attempts reset, and nothing else changes.
"""

from __future__ import annotations

from typing import Any

import pytest

from sqsjobs import JobConfigError, JobStatus
from sqsjobs.core.reports import RedriveReport
from sqsjobs.store import (
    DepthStore,
    JobStore,
    LimitStore,
    PresenceStore,
    RedriveStore,
    RetryStore,
    RoutedStore,
    StatsStore,
)

from .capabilities import (
    DeadLetterStore,
    ReconcileStore,
    SyncDeadLetterStore,
    SyncDepthStore,
    SyncPresenceStore,
    SyncReconcileStore,
    SyncRedriveStore,
    SyncRetryStore,
    SyncStatsStore,
)
from .harness import BOTH_FACES, Harness
from .support import claim_one, get, put

pytestmark = BOTH_FACES

ERROR = "LabelPrinterOffline: imprimante « Zürich-3 » hors ligne"


async def dead_job(harness: Harness, name: str, queue: str = "default") -> str:
    """A job of ``name`` that failed its only attempt."""
    await put(harness, name, {"order": "Ø-1729", "lines": ["café", "naïve"]}, queue=queue)
    job = await claim_one(harness, queue)
    assert job.name == name
    store: Any = harness.store
    assert await store.fail(job.id, job.lease_token or "", ERROR, None, harness.now())
    assert (await get(harness, job.id)).status is JobStatus.DEAD
    return job.id


async def test_redrive_runs_the_dead_jobs_of_a_queue_again(harness: Harness) -> None:
    store: Any = harness.store
    first = await dead_job(harness, "labels.print")
    second = await dead_job(harness, "labels.print")
    elsewhere = await dead_job(harness, "labels.print", queue="other")
    reports: list[RedriveReport] = []
    report = await store.redrive("default", on_progress=reports.append)
    assert report.redriven == 2 and reports and reports[-1].redriven == 2
    for job_id in (first, second):
        revived = await get(harness, job_id)
        assert (revived.status, revived.attempts, revived.last_error) == (
            JobStatus.QUEUED,
            0,
            ERROR,
        )
    assert (await get(harness, elsewhere)).status is JobStatus.DEAD
    claimed = {(await claim_one(harness)).id, (await claim_one(harness)).id}
    assert claimed == {first, second}


async def test_redrive_by_name_and_limit_leaves_the_rest_dead(harness: Harness) -> None:
    store: Any = harness.store
    labels = [await dead_job(harness, "labels.print") for _ in range(3)]
    invoice = await dead_job(harness, "invoices.send")
    report = await store.redrive(name="labels.print", limit=2)
    assert report.redriven == 2
    statuses = [(await get(harness, job_id)).status for job_id in labels]
    assert sorted(statuses) == [JobStatus.DEAD, JobStatus.QUEUED, JobStatus.QUEUED]
    assert (await get(harness, invoice)).status is JobStatus.DEAD


@pytest.mark.parametrize(
    ("option", "value", "code"),
    [("limit", 0, "invalid_option"), ("name", "labels print", "invalid_name")],
)
async def test_redrive_refuses_a_bad_option_before_touching_anything(
    harness: Harness, option: str, value: object, code: str
) -> None:
    store: Any = harness.store
    job_id = await dead_job(harness, "labels.print")
    with pytest.raises(JobConfigError) as caught:
        await store.redrive(**{option: value})
    assert caught.value.code == code and repr(value) in str(caught.value)
    assert (await get(harness, job_id)).status is JobStatus.DEAD


async def test_redrive_of_a_queue_without_dead_jobs_redrives_nothing(harness: Harness) -> None:
    store: Any = harness.store
    job = await put(harness, "labels.print")
    assert (await store.redrive("default")).redriven == 0
    assert (await get(harness, job.id)).status is JobStatus.QUEUED


ASYNC = {
    "memory": (JobStore, LimitStore, RetryStore, RedriveStore, PresenceStore),
    "sqs": (
        JobStore,
        LimitStore,
        RetryStore,
        RedriveStore,
        PresenceStore,
        StatsStore,
        DepthStore,
        DeadLetterStore,
        ReconcileStore,
        RoutedStore,
    ),
}
BLOCKING = {
    "memory": (SyncRetryStore, SyncRedriveStore, SyncPresenceStore),
    "sqs": (
        SyncRetryStore,
        SyncRedriveStore,
        SyncPresenceStore,
        SyncStatsStore,
        SyncDepthStore,
        SyncDeadLetterStore,
        SyncReconcileStore,
    ),
}
EVERY_ASYNC = set(ASYNC["sqs"])
EVERY_BLOCKING = set(BLOCKING["sqs"])


async def test_each_store_has_the_capabilities_its_table_says(harness: Harness, face: str) -> None:
    kind = harness.kind.removesuffix("-blocking")
    store: Any = harness.store if face == "async" else harness.store._store
    has = {protocol for protocol in EVERY_ASYNC if isinstance(store, protocol)}
    assert has == set(ASYNC[kind])
    blocking = {protocol for protocol in EVERY_BLOCKING if isinstance(store.sync, protocol)}
    assert blocking == set(BLOCKING[kind])
