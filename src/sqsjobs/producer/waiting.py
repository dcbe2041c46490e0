"""Waiting for a job to end: the one schedule of reads behind every producer face's ``wait``.

``JobQueue.wait``, ``SyncJobQueue.wait`` and the tenant views' ``wait`` read a job's record
until its status is terminal (``core.lifecycle.TERMINAL``: completed, dead, cancelled).
When to read, what a read means and when to give up are decided here once, by
``reads``: a generator, as the AWS flows are, that yields the pause before each read and
is sent the record read. The faces only drive it: ``wait_async`` sleeps with
``asyncio.sleep`` and awaits its read, ``wait_blocking`` sleeps with ``time.sleep``; neither
holds a rule of its own, so the two cannot drift apart.

The schedule, which is the cost of a wait (one store ``get`` a read: on ``SqsJobStore``
one consistent ``GetItem``, a read unit per 4 KB of record, and one more for a payload
kept in a body item):

- The first read is at once, then the pauses between reads grow: 0.1, 0.2, 0.4 and
  0.8 s (``FIRST_PAUSES``), so reads come at 0, 0.1, 0.3, 0.7 and 1.5 s, and a job that
  ends within a moment is seen within a tenth of a second of it.
- Then ``STEADY_PAUSE``, 1 s, between reads for as long as the wait lasts: after the
  first second at most one read a second, so a long wait costs about one read a second,
  whoever waits and for however long.
- A pause is counted from the end of the read before it, so a slow read never brings the
  next one closer.
- The last read is at the deadline: once less than two pauses are left, the next pause
  stretches to the deadline (it never shrinks, so the one-a-second rule holds to the end)
  and that read is the last. A job that has ended by the deadline is returned, never
  reported as a timeout.

So a 5 s wait for a job that never ends reads at 0, 0.1, 0.3, 0.7, 1.5, 2.5, 3.5 and 5 s
(8 reads), a 10 s one 13 times, and any wait of 2.5 s or more ``floor(timeout + 3.5)``
times, reads taking no time (``tests/test_wait.py`` drives ``reads`` on a fake clock to
hold it to these numbers).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Generator, Iterator
from dataclasses import dataclass
from datetime import timedelta
from itertools import chain, repeat

from ..core.errors import JobConfigError
from ..core.lifecycle import TERMINAL
from ..core.models import Job
from ..core.validation import POSITIVE, duration

FIRST_PAUSES = (0.1, 0.2, 0.4, 0.8)
"""The pauses after the first reads: a job that ends quickly is seen quickly."""
STEADY_PAUSE = 1.0
"""The pause between reads after the first second: at most one read a second."""

Reads = Generator[float, Job | None, Job]
"""Yields the pause before each read (0 for the first), is sent the record read, returns
the record once it is terminal."""


@dataclass(frozen=True)
class Pacing:
    """The time a wait runs on: a monotonic clock, and a sleep for each kind of face.

    Real ones by default. A test hands a producer a fake that records each pause and moves
    its own clock by it, so the schedule is asserted exactly, without sleeping.
    """

    monotonic: Callable[[], float] = time.monotonic
    sleep: Callable[[float], None] = time.sleep
    async_sleep: Callable[[float], Awaitable[None]] = asyncio.sleep


REAL_PACING = Pacing()


def pauses() -> Iterator[float]:
    """The pauses between reads, before any is stretched to the deadline: 0.1, 0.2, 0.4,
    0.8, then 1 s for ever."""
    return chain(FIRST_PAUSES, repeat(STEADY_PAUSE))


def reads(job_id: str, timeout: float | timedelta, monotonic: Callable[[], float]) -> Reads:
    """Read until job ``job_id`` has ended, for ``timeout`` from the start at most.

    ``timeout`` is checked on the first ``next``, before any read: a positive finite
    number of seconds or a ``timedelta`` (``JobConfigError`` ``invalid_option``, as for
    every duration given per call).

    The deadline is measured on ``monotonic`` (``time.monotonic``), real elapsed time,
    not on the producer's ``clock``: that clock is the jobs' time, the epoch seconds a
    producer stamps on records and hands the store as ``now``. It may be a test's fake
    clock that moves only when told (a wait on it would never end), and wall time can
    step (NTP, a resumed VM), while a caller's timeout is how long it is prepared to
    block, which only a monotonic clock measures.

    Raises ``TimeoutError`` (naming the job, its status at the last read and the
    timeout) if the job has not ended by the deadline, and ``JobConfigError``
    (``invalid_option``) if a read finds no record: see ``missing``.
    """
    seconds = duration(timeout, "wait() timeout", POSITIVE, code="invalid_option")
    deadline = monotonic() + seconds
    schedule = pauses()
    pause, last = 0.0, False
    while True:
        job = yield pause
        if job is None:
            raise missing(job_id)
        if job.status in TERMINAL:
            return job
        left = deadline - monotonic()
        if last or left <= 0:
            raise TimeoutError(
                f"Job {job_id!r} is still {job.status.value} after waiting {seconds:g} s: "
                "it did not end (completed, dead or cancelled) within the timeout"
            )
        pause = next(schedule)
        last = left < 2 * pause
        if last:
            pause = left


def missing(job_id: str) -> JobConfigError:
    """The error for an id without a record, at the first read or a later one.

    Everywhere else an unknown id is simply absent (``get`` returns ``None``, ``cancel``
    and ``retry`` return ``False``), but ``wait`` returns a ``Job`` and has no such value:
    polling on would spend the whole timeout (and its reads) on a typo, or on a record
    whose retention ended, neither of which can appear later. So it is refused at once as
    input that names nothing, ``invalid_option``, as SPEC section 7 has an unknown parent
    id given to ``enqueue(after=...)`` refused, in the words of the CLI's ``jobs show``.
    A tenant view treats another tenant's job as unknown, and says no more about it.
    """
    return JobConfigError(
        "invalid_option",
        f"No job {job_id!r} to wait for (unknown, or removed when its retention period "
        "ended): pass an id that enqueue returned",
    )


def wait_blocking(
    job_id: str,
    timeout: float | timedelta,
    read: Callable[[str], Job | None],
    pacing: Pacing = REAL_PACING,
) -> Job:
    """``reads``, driven by blocking reads and ``time.sleep``: ``SyncJobQueue.wait``."""
    steps = reads(job_id, timeout, pacing.monotonic)
    step: float | Job = next(steps)
    while not isinstance(step, Job):
        if step > 0:
            pacing.sleep(step)
        step = _advance(steps, read(job_id))
    return step


async def wait_async(
    job_id: str,
    timeout: float | timedelta,
    read: Callable[[str], Awaitable[Job | None]],
    pacing: Pacing = REAL_PACING,
) -> Job:
    """``reads``, driven by awaited reads and ``asyncio.sleep``: ``JobQueue.wait``."""
    steps = reads(job_id, timeout, pacing.monotonic)
    step: float | Job = next(steps)
    while not isinstance(step, Job):
        if step > 0:
            await pacing.async_sleep(step)
        step = _advance(steps, await read(job_id))
    return step


def _advance(steps: Reads, record: Job | None) -> float | Job:
    """The pause before the next read, or the record ``steps`` returned: the job ended."""
    try:
        return steps.send(record)
    except StopIteration as ended:
        job: Job = ended.value
        return job
