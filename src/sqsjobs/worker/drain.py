"""Draining a stopping worker: running jobs get the grace period to finish, the rest go back.

    stop(grace) ─► a job ends within grace ─────────────────────────────► finished
                └► still running: interrupted ("stop"), its run releases it ─► released
                     └► still running after another grace (its handler
                        ignores cancellation): cancelled and released here ─► released

Released means back in its queue at once, the attempt not counted, so a deploy costs no
attempt. The log says when draining starts (which jobs run) and how it ended: which
jobs finished and which were handed back, the ids an operator looks for when a deploy
interrupted work. A job whose release was not recorded (its lease was lost, it was
cancelled, the store kept failing) is reported as neither: its lease decides its fate.

Meanwhile the drain waits for the long polls the stop cut short. SQS runs a cancelled
``ReceiveMessage`` on until its wait ends and hides what it hands that poll (a job
enqueued during the stop, or one this drain released) for the visibility timeout; the
store hands such messages back at once, as long as the process lives
(``SqsJobStore.wait_cancelled_claims``). So a stop takes the longer of the jobs' drain
and the rest of the last long poll: up to the store's ``wait_time`` (20 s by default)
for an idle worker.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..core.errors import describe_error
from ..core.lifecycle import STOPPING_ERROR
from ..core.store import CancelledClaimsStore, JobStore
from ..observe.log import Event
from .run import JobRun, Outcome

Log = Callable[..., None]  # (level, event, message, job=None, **extra), the worker's log


async def drain(
    runs: Mapping[asyncio.Task[None], JobRun],
    grace: float,
    store: JobStore,
    clock: Callable[[], float],
    log: Log,
) -> None:
    """Wait for, then interrupt and release, the jobs in ``runs`` (a live view: a run
    leaves it when its task ends); log the start and the end."""
    started = time.monotonic()
    running = list(runs.values())
    ids = [run.job.id for run in running]
    listed = f"{len(ids)} running job(s), up to {grace:g}s to finish: {', '.join(ids)}"
    log(
        logging.INFO,
        Event.DRAINING,
        f"Draining {listed}" if ids else "Draining: no job running",
        job_ids=ids,
        grace=grace,
    )
    polls = asyncio.ensure_future(cancelled_claims_ended(store))
    try:
        interrupted, released = await _end_runs(runs, grace, store, clock, log)
        await polls
    finally:
        polls.cancel()  # only when the drain itself failed or was cancelled
    _log_drained(log, time.monotonic() - started, running, interrupted, released)


async def cancelled_claims_ended(store: JobStore) -> None:
    """Wait for the receives of the claims a stop cancelled, on a store that has any
    (``SqsJobStore``); a store that waits in-process (``MemoryJobStore``) has none."""
    if isinstance(store, CancelledClaimsStore):
        await store.wait_cancelled_claims()


async def _end_runs(
    runs: Mapping[asyncio.Task[None], JobRun],
    grace: float,
    store: JobStore,
    clock: Callable[[], float],
    log: Log,
) -> tuple[list[JobRun], list[str]]:
    """Wait, interrupt, force: the runs interrupted, and the ids of the jobs released."""
    if runs:
        await asyncio.wait(list(runs), timeout=grace)
    interrupted = list(runs.values())
    for run in interrupted:
        run.interrupt("stop")
    if runs:
        await asyncio.wait(list(runs), timeout=grace)
    stuck = list(runs.items())
    forced = set()
    for task, run in stuck:
        task.cancel()
        if await _force_release(run, store, clock, log):
            forced.add(run.job.id)
    await asyncio.gather(*(task for task, _ in stuck), return_exceptions=True)
    released = [
        run.job.id for run in interrupted if run.outcome is Outcome.RELEASED or run.job.id in forced
    ]
    return interrupted, released


def _log_drained(
    log: Log, elapsed: float, running: list[JobRun], interrupted: list[JobRun], released: list[str]
) -> None:
    finished = [run.job.id for run in running if run not in interrupted]
    unsettled = [run.job.id for run in interrupted if run.job.id not in released]
    message = (
        f"Drained in {elapsed:.1f}s: {len(finished)} job(s) finished, "
        f"{len(released)} released back to their queue"
    )
    if released:
        message += f": {', '.join(released)}"
    if unsettled:
        message += f"; {len(unsettled)} left to their lease: {', '.join(unsettled)}"
    extra: dict[str, Any] = {"finished": finished, "released": released, "unsettled": unsettled}
    log(logging.INFO, Event.DRAINED, message, **extra)


async def _force_release(
    run: JobRun, store: JobStore, clock: Callable[[], float], log: Log
) -> bool:
    """Release a run whose handler ignored cancellation for the whole grace period."""
    try:
        released = await store.release(run.job.id, run.token, STOPPING_ERROR, clock())
    except Exception as error:
        log(logging.ERROR, Event.RUN_FAILED, f"Release failed: {describe_error(error)}", run.job)
        return False
    if released:
        run.observed.count("released")  # its run was cancelled before it could report one
        log(
            logging.INFO,
            Event.RELEASED,
            f"Released job {run.job.name!r} ({run.job.id}) at shutdown",
            run.job,
            error=STOPPING_ERROR,
        )
    return released
