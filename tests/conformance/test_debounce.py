"""Debounced enqueues (``enqueue(debounce_key=..., debounce=...)``, SPEC §7): a burst
with one key is one job, with the last payload, due ``debounce`` seconds after the last
enqueue; once it has started, the next enqueue is a new job. Per tenant, like keys."""

from __future__ import annotations

import asyncio

import pytest

from sqsjobs import EnqueueRequest, Job, JobConfigError, JobQueue, JobStatus

from .harness import Harness
from .support import claim


async def claim_soon(harness: Harness) -> list[Job]:
    """A claim, tried again a few times: on SQS the first may only merge the burst's
    slot into its record and send the message back (``flows.debounce``)."""
    for _ in range(20):
        jobs = await claim(harness)
        if jobs:
            return jobs
        await asyncio.sleep(0.1)
    return []


def queue_of(harness: Harness) -> JobQueue:
    return JobQueue(harness.store, clock=harness.clock)


async def test_a_burst_is_one_job_with_the_last_payload_due_after_the_last_enqueue(
    harness: Harness,
) -> None:
    queue = queue_of(harness)
    first = await queue.enqueue("search.reindex", {"rev": 1}, debounce_key="user-42", debounce=5)
    assert not first.duplicate and first.job.status is JobStatus.DELAYED
    assert first.job.debounce_key == "user-42"
    await harness.advance(2.5)
    later = [
        await queue.enqueue(
            "search.reindex", {"rev": rev, "name": "Zoë"}, debounce_key="user-42", debounce=5
        )
        for rev in (2, 3)
    ]
    assert [(r.duplicate, r.job.id) for r in later] == [(True, first.job.id)] * 2
    assert later[-1].job.payload == {"rev": 3, "name": "Zoë"}
    await harness.advance(2.6)  # the first enqueue's 5 s are over, the last one's not
    assert await claim(harness) == []  # due 5 s after the last enqueue, not the first
    await harness.advance(2.6)
    [job] = await claim_soon(harness)
    assert (job.id, job.payload) == (first.job.id, {"rev": 3, "name": "Zoë"})
    after = await queue.enqueue("search.reindex", {"rev": 4}, debounce_key="user-42", debounce=5)
    assert not after.duplicate and after.job.id != first.job.id  # it started: a new job


async def test_keys_are_per_queue_and_tenant(harness: Harness) -> None:
    queue = queue_of(harness)
    made = [
        await queue.enqueue("mail.digest", {"n": n}, debounce_key="digest", debounce=60, **where)
        for n, where in enumerate(
            [{}, {"tenant": "acme"}, {"tenant": "globex"}, {"queue": "other"}, {"tenant": "acme"}]
        )
    ]
    assert [r.duplicate for r in made] == [False, False, False, False, True]
    assert len({r.job.id for r in made}) == 4


@pytest.mark.parametrize(
    ("options", "said"),
    [
        ({"debounce_key": "k"}, "debounce_key and debounce together"),
        ({"debounce": 5}, "debounce_key and debounce together"),
        ({"debounce_key": "k", "debounce": 0}, "debounce"),
        ({"debounce_key": "k", "debounce": 86400}, "debounce"),
        ({"debounce_key": "k", "debounce": 5, "idempotency_key": "i"}, "idempotency_key"),
        ({"debounce_key": "k", "debounce": 5, "delay": 3}, "delay"),
        ({"debounce_key": "", "debounce": 5}, "debounce key"),
    ],
)
async def test_bad_debounce_options_are_refused_before_anything_is_written(
    harness: Harness, options: dict[str, object], said: str
) -> None:
    with pytest.raises(JobConfigError, match=said):
        await queue_of(harness).enqueue("x", None, **options)  # type: ignore[arg-type]
    with pytest.raises(JobConfigError, match=said):
        await queue_of(harness).enqueue_many([EnqueueRequest("x", **options)])  # type: ignore[arg-type]
    assert await claim(harness, limit=10) == []
