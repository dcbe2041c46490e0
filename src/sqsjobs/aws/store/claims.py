"""Claiming for the async face and the Lambda handler: a plan of reads, then one pass.

A worker's claim asks the lane picker once for its plan (the SQS queues to read, in
order: ``lanes``), and for each read takes held messages, else receives up to ten,
claims what it asked for and holds the rest (``background``), stopping at the first read
that yields jobs; the picker is told once what each read yielded. The Lambda handler
claims the messages its event delivered. Both end in ``Claims._claim``, which runs the
claim flow, logs what it disposed of, and registers each claimed job's message in the
shared ``DeliveryMap``.

Claim is cancellation-safe. A receive cancelled in flight is not over: SQS keeps the
request running and hands it what arrives until its wait ends, hidden from everyone
else for the visibility timeout. So the receive runs on in the background and what it
brings goes straight back to the queue, unclaimed (``Background.uninterrupted``). Once
messages are in hand, the claim step runs shielded, and if the caller was cancelled
meanwhile, whatever it claimed is released (attempt not counted). A stopping worker
waits for both (``SqsJobStore.wait_cancelled_claims``) before its process exits.
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Mapping, Sequence
from typing import Protocol, TypeVar

from ...core.lifecycle import LEASE_EXPIRED_ERROR
from ...core.models import Job
from ...core.store import ClaimWatcher
from ...core.text import safe_line
from ...observe.log import LOGGER_NAME, Event, log_event
from ..flows import pauses, settle
from ..flows.claim import Claimed, Delivery
from ..flows.groups import receive_heads
from ..flows.messages import receive
from ..flows.moved_back import MovedBack
from ..wire import sqs
from ..wire.layout import Layout
from ..wire.protocol import Flow, public_error
from ..wire.sqs import Message, QueueInfo
from .background import Background, Receive
from .lanes import LanePicker, Read
from .state import StoreState

T = TypeVar("T")
_logger = logging.getLogger(LOGGER_NAME)

CANCELLED_CLAIM = "claim was cancelled before its jobs were handed out"
# How long a claim step cut short by a cancel may take to claim and release its jobs
# (a DynamoDB write each way, and their retries) before a stop stops waiting for it.
CLAIM_STEP_TIME = 10.0


class Run(Protocol):
    """Drive a flow to its result (the async face's ``_run``)."""

    def __call__(self, flow: Flow[T], /) -> Awaitable[T]: ...


class Claims:
    def __init__(self, state: StoreState, run: Run, background: Background) -> None:
        self._state = state
        self._run = run
        self._background = background
        self._lanes = LanePicker()
        self._watchers: dict[str, ClaimWatcher] = {}  # per worker id: claim refusals

    def watch(self, worker_id: str, watcher: ClaimWatcher | None) -> None:
        """Tell ``watcher`` how many messages each claim by ``worker_id`` refused."""
        if watcher is None:
            self._watchers.pop(worker_id, None)
        else:
            self._watchers[worker_id] = watcher

    async def claim(
        self, queue: str, worker_id: str, now: float, limit: int, wait: float
    ) -> list[Job]:
        """Claim up to ``limit`` jobs: read the plan's SQS queues in order until one yields.

        The plan (``lanes``) is the queue alone, or, while it is busy, its priority lanes
        and then the queue. Only the last read long-polls, for up to ``wait`` seconds
        (capped at ``wait_time``); after it, due-ness and the lease are reckoned from
        ``now`` plus the time waited.
        """
        if await self._state.pauses.hold(queue, self._read_pauses, wait):
            return []  # paused: not received from, so no receive counts toward the DLQ
        layout = await self._run(self._state.described([queue]))
        plan = self._lanes.plan(queue, layout.lanes.get(queue, ()), time.monotonic())
        reads: list[Read] = []
        try:
            for lane in plan:
                waits = wait if len(reads) == len(plan) - 1 else 0  # the last read only
                jobs, read, now = await self._read(
                    layout, queue, lane, worker_id, now, limit, waits
                )
                reads.append(read)
                if jobs:
                    return jobs
            return []
        finally:
            self._lanes.record(queue, reads, time.monotonic())

    async def _read(
        self,
        layout: Layout,
        queue: str,
        lane: str | None,
        worker_id: str,
        now: float,
        limit: int,
        wait: float,
    ) -> tuple[list[Job], Read, float]:
        """One read of a plan: held messages, else a receive; then claim what they deliver.

        Returns the jobs, what the read yielded, and ``now`` after any long poll.
        """
        view = layout if lane is None else layout.via(queue, lane)
        info = view.info(queue)
        wait_seconds = 0 if wait <= 0 else min(math.ceil(wait), self._state.wait)
        started = time.monotonic()
        receive = self._receive(info, limit, wait_seconds)
        messages, received = await self._background.messages_for(
            info.url, limit, receive, wait_seconds
        )
        if received and wait_seconds:
            now += time.monotonic() - started
        if not messages:
            return [], Read(lane, found=False, received=False, jobs=0), now
        step = asyncio.ensure_future(self._claim(view, queue, messages, worker_id, now, lane))
        try:
            deliveries = await asyncio.shield(step)
        except asyncio.CancelledError:
            until = time.monotonic() + CLAIM_STEP_TIME
            self._background.spawn(self._release_claimed(step), until=until)
            raise
        jobs = [delivery.job for delivery in deliveries]
        return jobs, Read(lane, found=True, received=received, jobs=len(jobs)), now

    async def claim_messages(
        self, queue: str, messages: Sequence[Message], worker_id: str, now: float
    ) -> tuple[list[Delivery], set[str]]:
        """Claim the jobs ``messages`` deliver (the Lambda handler's event records): the
        deliveries, and the ids of the messages settled for good without a run."""
        layout = await self._run(self._state.described([queue]))
        settled: set[str] = set()
        deliveries = await self._claim(layout, queue, messages, worker_id, now, settled=settled)
        return deliveries, settled

    def _read_pauses(self) -> Awaitable[Mapping[str, float]]:
        return self._run(pauses.paused(self._state.layout))

    def _receive(self, info: QueueInfo, limit: int, wait: int) -> Receive:
        """A receive of a given size from ``info``'s queue, with its own visibility timeout
        (``QueueInfo.visibility``); on a FIFO queue, of ``limit`` heads of their groups,
        one job per group at a time (``flows.groups``)."""
        if sqs.is_fifo(info.url):
            return lambda _: self._run(receive_heads(info.url, limit, wait, info.visibility))
        return lambda size: self._run(receive(info.url, size, wait, info.visibility))

    async def _claim(
        self,
        layout: Layout,
        queue: str,
        messages: Sequence[Message],
        worker_id: str,
        now: float,
        lane: str | None = None,
        *,
        settled: set[str] | None = None,
    ) -> list[Delivery]:
        """Claim what ``messages`` deliver; ``settled`` gets the ids disposed of for good.

        Only the Lambda handler asks for ``settled``: its messages came from the event
        source mapping, not from a worker's receive (``flows.claim.fitted_visibility``).
        """
        paused_since = await self._state.pauses.since(queue, self._read_pauses)
        if paused_since is not None:  # learned with messages in hand, or a Lambda event
            await self._run(pauses.hold_back(layout, queue, messages, paused_since, now))
            return []
        lambda_ = settled is not None
        flow = self._state.claimed(layout, queue, messages, worker_id, now, event_source=lambda_)
        claimed = await self._run(flow)
        _log_disposed(queue, claimed)
        if settled is not None:
            settled |= claimed.settled
        watcher = self._watchers.get(worker_id)
        if watcher is not None:  # refused: neither claimed nor failed for AWS's own reasons
            watcher(queue, len(messages) - len(claimed.deliveries) - len(claimed.errors))
        deliveries = [delivery._replace(lane=lane) for delivery in claimed.deliveries]
        for delivery in deliveries:
            self._state.deliveries.add(delivery)
        if claimed.errors and not deliveries:
            raise public_error(claimed.errors[0]) from claimed.errors[0].cause
        return deliveries

    async def _release_claimed(self, step: asyncio.Future[list[Delivery]]) -> None:
        """Release what a cancelled claim's step claimed: back to queued, attempt uncounted."""
        try:
            deliveries = await step
        except Exception:
            return  # nothing was handed out; unclaimed messages come back on their own
        now = self._state.clock()
        for delivery in deliveries:
            job_id, lease_token = delivery.key
            layout = delivery.layout(self._state.layout)
            flow = settle.release(layout, delivery, job_id, lease_token, CANCELLED_CLAIM, now, None)
            await self._run(flow)
            self._state.deliveries.pop(job_id, lease_token)


def _log_disposed(queue: str, claimed: Claimed) -> None:
    """Log the messages a claim disposed of without a run."""
    for message, reason in claimed.malformed:
        why = safe_line(reason)  # the text of a foreign body or record: one line
        _logger.warning(
            "Removed malformed message %s from queue %r to its dead-letter queue: %s",
            message.message_id,
            queue,
            why,
            extra={"event": Event.MALFORMED_MESSAGE, "queue": queue, "error": why},
        )
    for message, job_id in claimed.unknown:
        _logger.warning(
            "Deleted message %s from queue %r: job %s has no record (never written, "
            "or past its retention)",
            message.message_id,
            queue,
            job_id,
            extra={"event": Event.UNKNOWN_JOB, "queue": queue, "job_id": job_id},
        )
    for job in claimed.dead:
        text = f"Job {job.name!r} ({job.id}) dead-lettered: {LEASE_EXPIRED_ERROR}"
        log_event(_logger, logging.WARNING, Event.DEAD, text, job, error=LEASE_EXPIRED_ERROR)
    for moved in claimed.moved_back:
        _log_moved_back(queue, moved)


def _log_moved_back(queue: str, moved: MovedBack) -> None:
    """Say what became of a dead job's message that SQS moved back from the DLQ: the
    console's "Start DLQ redrive" should not leave a job dead without a word."""
    job = moved.job
    if moved.refused is None:
        text = (
            f"Job {job.name!r} ({job.id}) runs again: its dead-letter copy came back to "
            f"queue {queue!r} (a DLQ redrive), attempts reset"
        )
        log_event(_logger, logging.INFO, Event.MOVED_BACK, text, job)
        return
    text = (
        f"Job {job.name!r} ({job.id}) is dead and stays dead: message {moved.message_id} "
        f"came to queue {queue!r} after it died (a DLQ redrive?) but cannot run it: "
        f"{moved.refused}. Deleted it; run the job again with `sqsjobs dlq redrive`, "
        f"`sqsjobs jobs retry {job.id}` or the dashboard's Retry"
    )
    log_event(_logger, logging.WARNING, Event.MOVED_BACK, text, job, error=moved.refused)
