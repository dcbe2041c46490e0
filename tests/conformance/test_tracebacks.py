"""A failure's traceback on the record: kept beside the error it belongs to, on every store.

The worker hands ``fail`` a ``FailureText``: the ``last_error`` line that also carries the
traceback. Each store keeps it as ``Job.last_traceback`` for exactly as long as that
error is the record's ``last_error``.
"""

from __future__ import annotations

from sqsjobs.core.tracebacks import FailureText

from .harness import Harness
from .support import claim_one, get, put

# A traceback as a handler's failure leaves one: several frames, unicode, ~1 KB.
TRACE = "\n".join(
    [
        "Traceback (most recent call last):",
        *(
            f'  File "/srv/app/jobs/stage_{n}.py", line {40 + n}, in step_{n}\n'
            f"    total = ledger.post(entry_{n}, «Zoë Åsa»)"
            for n in range(8)
        ),
        "KeyError: 'invoice-7731'",
    ]
)


async def test_a_failure_keeps_its_traceback_until_the_next_error_replaces_it(
    harness: Harness,
) -> None:
    await put(harness, max_attempts=3)
    job = await claim_one(harness)
    now = harness.now()
    error = FailureText("KeyError: 'invoice-7731'", TRACE)
    assert await harness.store.fail(job.id, job.lease_token or "", error, now, now)
    failed = await get(harness, job.id)
    assert (failed.last_error, failed.last_traceback) == ("KeyError: 'invoice-7731'", TRACE)
    assert type(failed.last_error) is str  # a plain str on the way out, on every store

    again = await claim_one(harness)
    assert (again.id, again.last_traceback) == (job.id, TRACE)  # the claim reads it too
    later = harness.now()
    assert await harness.store.fail(
        job.id, again.lease_token or "", "JobTimeoutError: 30s", later, later
    )
    timed_out = await get(harness, job.id)
    assert (timed_out.last_error, timed_out.last_traceback) == ("JobTimeoutError: 30s", None)


async def test_a_dead_job_and_a_completed_one_keep_the_last_failures_traceback(
    harness: Harness,
) -> None:
    await put(harness, max_attempts=2)
    job = await claim_one(harness)
    error = FailureText("ValueError: bad ledger", TRACE)
    assert await harness.store.fail(
        job.id, job.lease_token or "", error, harness.now(), harness.now()
    )
    second = await claim_one(harness)
    assert await harness.store.complete(job.id, second.lease_token or "", harness.now(), {"ok": 1})
    done = await get(harness, job.id)
    assert (done.last_error, done.last_traceback) == ("ValueError: bad ledger", TRACE)

    await put(harness, max_attempts=1)
    doomed = await claim_one(harness)
    fatal = FailureText("JobFatalError: negative amount", TRACE)
    assert await harness.store.fail(doomed.id, doomed.lease_token or "", fatal, None, harness.now())
    dead = await get(harness, doomed.id)
    assert (dead.status.value, dead.last_traceback) == ("dead", TRACE)


async def test_a_release_drops_the_traceback_of_an_earlier_failure(harness: Harness) -> None:
    await put(harness, max_attempts=3)
    job = await claim_one(harness)
    error = FailureText("OSError: disk full", TRACE)
    assert await harness.store.fail(
        job.id, job.lease_token or "", error, harness.now(), harness.now()
    )
    again = await claim_one(harness)
    stopping = "worker is stopping; the job was released"
    assert await harness.store.release(job.id, again.lease_token or "", stopping, harness.now())
    released = await get(harness, job.id)
    assert (released.last_error, released.last_traceback) == (stopping, None)
