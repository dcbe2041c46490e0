"""Progress rides with the writes under a lease: heartbeats and outcomes (``ctx.progress``).

A store that keeps progress (``keeps_progress``) takes ``progress=`` on ``heartbeat``,
``complete``, ``fail`` and ``release``, writes it only when that write is accepted, and
returns it as ``Job.progress``; last value wins.
"""

from __future__ import annotations

import pytest

from sqsjobs import JobConfigError, JobStatus

from .harness import Harness
from .support import claim_one, get, put

DONE = {"done": 420, "total": 1000, "stage": "zählen ✓"}


async def test_a_heartbeat_keeps_the_progress_it_carries(harness: Harness) -> None:
    await put(harness, lease=30)
    job = await claim_one(harness)
    assert getattr(harness.store, "keeps_progress", False) is True
    assert job.progress is None
    now = harness.now()
    token = job.lease_token or ""
    assert await harness.store.heartbeat(job.id, token, now + 30, now, progress=0.25)
    assert (await get(harness, job.id)).progress == 0.25
    assert await harness.store.heartbeat(job.id, token, now + 31, now + 0.5, progress=DONE)
    assert (await get(harness, job.id)).progress == DONE
    # A heartbeat without progress leaves the last value.
    assert await harness.store.heartbeat(job.id, token, now + 32, now + 0.6)
    assert (await get(harness, job.id)).progress == DONE


async def test_each_outcome_keeps_the_progress_it_carries(harness: Harness) -> None:
    for n in range(3):
        await put(harness, payload={"n": n}, max_attempts=3)
    first, second, third = [await claim_one(harness) for _ in range(3)]
    now = harness.now()
    assert await harness.store.complete(
        first.id, first.lease_token or "", now, {"ok": True}, progress=1.0
    )
    assert await harness.store.fail(
        second.id, second.lease_token or "", "E: x", now + 60, now, progress=[3, 9]
    )
    assert await harness.store.release(
        third.id, third.lease_token or "", "E: y", now, progress="half way"
    )
    shown = [
        (j.status, j.progress) for j in [await get(harness, x.id) for x in (first, second, third)]
    ]
    assert shown == [
        (JobStatus.COMPLETED, 1.0),
        (JobStatus.DELAYED, [3, 9]),
        (JobStatus.QUEUED, "half way"),
    ]


async def test_a_refused_write_keeps_no_progress(harness: Harness) -> None:
    await put(harness, lease=30)
    job = await claim_one(harness)
    now = harness.now()
    assert not await harness.store.heartbeat(job.id, "not-the-token", now + 30, now, progress=0.9)
    assert not await harness.store.complete(job.id, "not-the-token", now, None, progress=0.9)
    assert (await get(harness, job.id)).progress is None


async def test_progress_over_a_kibibyte_is_refused_before_anything_is_written(
    harness: Harness,
) -> None:
    await put(harness, lease=30)
    job = await claim_one(harness)
    now = harness.now()
    with pytest.raises(JobConfigError) as refused:
        await harness.store.heartbeat(
            job.id, job.lease_token or "", now + 30, now, progress="é" * 600
        )
    assert refused.value.code == "invalid_payload"
    assert "1024 bytes" in str(refused.value)
    assert (await get(harness, job.id)) == job
