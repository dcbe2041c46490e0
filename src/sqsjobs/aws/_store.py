"""SqsJobStore: the job store on SQS (delivery) and DynamoDB (the record of truth).

Every method is "which flow, which driver": the async face drives flows on aioboto3
(imported on first use; boto3 in threads where the worker extra is not installed), the
``sync`` face on boto3. What the store adds is the state a
worker's claims need between calls: which message delivered each claim (``DeliveryMap``),
deletes waiting to be batched (``DeleteBuffer``), and each queue's SQS facts, learned once.

The operator calls (reconcile, retry, dead letters, redrive, stats) and ``list`` import
their flows on first use: a worker or a Lambda function that never calls them does not
pay for loading them at its cold start (``bench/lambda_import.py``).

Claim is cancellation-safe: a long poll may be cancelled (unclaimed messages just come
back); once messages are in hand, the claim step runs shielded, and if the caller was
cancelled meanwhile, whatever it claimed is released (attempt not counted).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from .._lifecycle import LEASE_EXPIRED_ERROR
from .._log import LOGGER_NAME, Event, log_event
from .._models import EnqueueResult, Job, JobFilter, JobPage
from .._text import safe_line
from .._validation import dump_json, plain_json
from . import _claim, _flows, _settle, _sqs
from ._background import Background
from ._config import StoreSettings
from ._deliveries import Delivery, DeliveryMap
from ._layout import Layout, describe_queue
from ._sync import SqsSyncView
from ._transport import AwsError, BotoTransport, Call, Flow, Reply, adrive, drive, public_error

if TYPE_CHECKING:
    from ._aio import AioTransport
    from ._dead_letters import DeadLetter
    from ._operations import Progress, RedriveReport
    from ._reconcile import ReconcileReport
    from ._stats import QueueStats

T = TypeVar("T")
_logger = logging.getLogger(LOGGER_NAME)

DEFAULT_VISIBILITY = 30  # until a claim shows a queue's leases
# Dead records outlive the longest DLQ retention SQS allows (14 days), so a redrive of
# any message still in a DLQ finds its record.
DEFAULT_DEAD_RETENTION = 14 * 86_400.0
CANCELLED_CLAIM = "claim was cancelled before its jobs were handed out"


class SqsJobStore:
    """Jobs in SQS + DynamoDB: durable, shared by any number of producers and workers.

    See ``docs/aws-store.md`` for the table layout, the message schema and the request
    budget. ``create`` makes the resources for development and tests; production deploys
    ``infra/`` and uses ``from_stack`` or ``from_env``.
    """

    max_payload_bytes: ClassVar[int] = 350 * 1024  # payload + record must fit a 400 KB item

    def __init__(
        self,
        *,
        table_name: str,
        queue_urls: Mapping[str, str],
        dead_letter_queue_urls: Mapping[str, str] | None = None,
        endpoint_url: str | None = None,
        region_name: str | None = None,
        retention: float = 86_400,
        dead_retention: float = DEFAULT_DEAD_RETENTION,
        wait_time: float = 20.0,
        resend_after: float = 60.0,
        clock_skew: float = 2.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        settings = StoreSettings.build(
            table_name=table_name, queue_urls=queue_urls,
            dead_letter_queue_urls=dead_letter_queue_urls, endpoint_url=endpoint_url,
            region_name=region_name, retention=retention, dead_retention=dead_retention,
            wait_time=wait_time, resend_after=resend_after, clock_skew=clock_skew,
        )  # fmt: skip
        self._endpoint = settings.endpoint
        self._layout = settings.layout
        self._wait = math.ceil(settings.wait_time)
        self._clock = clock
        self._boto = BotoTransport(settings.endpoint)
        self._aio: AioTransport | None = None
        self._threaded = False  # Lambda: drive boto3 from threads, never load aioboto3
        self._delete_on_complete = True  # Lambda deletes the messages it was not told of
        self._deliveries = DeliveryMap()
        self._visibility: dict[str, int] = {}
        self._background = Background(self._send)
        self.sync = SqsSyncView(self)

    # -- construction --------------------------------------------------------------------

    @classmethod
    def from_env(cls, **kwargs: Any) -> SqsJobStore:
        """From ``SQSJOBS_TABLE`` and ``SQSJOBS_QUEUES="default=URL,high=URL"``."""
        from ._config import env_arguments

        return cls(**{**env_arguments(), **kwargs})

    @classmethod
    def from_stack(cls, stack_name: str, **kwargs: Any) -> SqsJobStore:
        """From the outputs of a stack deployed from ``infra/`` (see docs/aws-store.md)."""
        from ._config import Endpoint, stack_arguments

        endpoint = Endpoint(kwargs.get("endpoint_url"), kwargs.get("region_name"))
        transport = BotoTransport(endpoint)
        try:
            found = stack_arguments(stack_name, transport)
        finally:
            transport.close()
        return cls(**{**found, **kwargs})

    @classmethod
    def create(
        cls,
        prefix: str,
        *,
        queues: Sequence[str] = ("default",),
        max_receive_count: int = 10,
        **kwargs: Any,
    ) -> SqsJobStore:
        """Create (or find) the table, queues and DLQs for ``prefix``; for dev and tests."""
        from ._config import Endpoint
        from ._provision import provision

        endpoint = Endpoint(kwargs.get("endpoint_url"), kwargs.get("region_name"))
        transport = BotoTransport(endpoint)
        try:
            made = provision(transport, prefix, queues, max_receive_count)
        finally:
            transport.close()
        store = cls(
            table_name=made.table,
            queue_urls={q: i.url for q, i in made.queues.items()},
            dead_letter_queue_urls={
                q: i.dead_letter_url for q, i in made.queues.items() if i.dead_letter_url
            },
            **kwargs,
        )
        for queue, info in made.queues.items():
            store._layout = store._layout.with_info(queue, info)
        return store

    # -- read-only configuration ---------------------------------------------------------

    @property
    def table_name(self) -> str:
        return self._layout.table

    @property
    def queue_urls(self) -> Mapping[str, str]:
        return MappingProxyType(dict(self._layout.queue_urls))

    @property
    def dead_letter_queue_urls(self) -> Mapping[str, str]:
        """Each queue's DLQ; read from its redrive policy when not given (blocking, once)."""
        for queue in self._layout.queue_urls:
            if queue not in self._layout.dead_letter_urls:
                self.sync.describe(queue)
        urls = {q: self._layout.info(q).dead_letter_url for q in sorted(self._layout.queue_urls)}
        return MappingProxyType({q: url for q, url in urls.items() if url})

    # -- drivers -------------------------------------------------------------------------

    async def _send(self, call: Call) -> Reply:
        """The async face's transport: aioboto3 where installed, else boto3 in threads.

        aioboto3 comes with the ``worker`` extra. The base install (producers, Lambda) has
        only boto3, so there the async face, like Lambda mode, runs each call in a thread
        (``asyncio.to_thread``): ``JobQueue`` over this store works in either install, at
        the cost of a thread per call in flight. Only a missing aioboto3 stack switches;
        any other import failure is raised.
        """
        if self._aio is None and not self._threaded:
            try:
                from ._aio import AioTransport
            except ModuleNotFoundError as missing:
                aio_stack = {"aioboto3", "aiobotocore", "aiohttp"}
                if (missing.name or "").partition(".")[0] not in aio_stack:
                    raise
                self._threaded = True
            else:
                self._aio = AioTransport(self._endpoint)
        if self._threaded or self._aio is None:
            return await asyncio.to_thread(self._boto, call)
        return await self._aio(call)

    async def _run(self, flow: Flow[T]) -> T:
        try:
            return await adrive(flow, self._send)
        except AwsError as error:
            raise public_error(error) from None

    def _run_sync(self, flow: Flow[T]) -> T:
        try:
            return drive(flow, self._boto)
        except AwsError as error:
            raise public_error(error) from None

    async def _described(self, queue: str) -> Layout:
        if queue not in self._layout.described:
            url = self._layout.url(queue)
            flow = describe_queue(queue, url, self._layout.dead_letter_urls.get(queue))
            self._layout = self._layout.with_info(queue, await self._run(flow))
        return self._layout

    async def _all_described(self, queues: Sequence[str] | None) -> tuple[Layout, list[str]]:
        """``queues`` (default: all, sorted), each described; for the operator calls."""
        names = list(queues) if queues is not None else sorted(self._layout.queue_urls)
        for queue in names:
            await self._described(queue)
        return self._layout, names

    # -- producer ------------------------------------------------------------------------

    async def put(self, job: Job, fingerprint: str | None) -> EnqueueResult:
        return await self._run(_flows.put(self._layout, job, fingerprint, self._clock()))

    async def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]:
        return await self._run(_flows.put_many(self._layout, items, self._clock()))

    async def get(self, job_id: str, now: float) -> Job | None:
        return await self._run(_flows.get(self._layout, job_id, now))

    async def cancel(self, job_id: str, now: float) -> bool:
        return await self._run(_flows.cancel(self._layout, job_id, now))

    # -- claiming ------------------------------------------------------------------------

    async def claim(
        self, queue: str, worker_id: str, now: float, *, limit: int = 1, wait: float = 0.0
    ) -> list[Job]:
        """Claim up to ``limit`` jobs from held messages, or from one receive of up to ten.

        The receive long-polls for up to ``wait`` seconds (capped at ``wait_time``); after a
        long poll, due-ness and the lease are reckoned from ``now`` plus the time waited.
        """
        layout = await self._described(queue)
        messages = self._background.held.take(queue, limit, time.monotonic())
        if not messages:
            messages, now = await self._receive(layout, queue, limit, wait, now)
        if not messages:
            return []
        visibility = self._visibility.get(queue, DEFAULT_VISIBILITY)
        step = asyncio.ensure_future(
            self._claim_received(layout, queue, messages, worker_id, now, visibility)
        )
        try:
            return await asyncio.shield(step)
        except asyncio.CancelledError:
            self._background.spawn(self._release_claimed(step))
            raise

    async def _receive(
        self, layout: Layout, queue: str, limit: int, wait: float, now: float
    ) -> tuple[list[_sqs.Message], float]:
        """Messages for this claim (the rest are held for the next), and ``now`` after it."""
        visibility = self._visibility.get(queue, DEFAULT_VISIBILITY)
        wait_seconds = 0 if wait <= 0 else min(math.ceil(wait), self._wait)
        size = self._background.held.receive_size(queue, limit, time.monotonic())
        started = time.monotonic()
        flow = _claim.receive(layout.url(queue), size, wait_seconds, visibility)
        messages = await self._run(flow)
        if wait_seconds:
            now += time.monotonic() - started
        self._background.hold(queue, layout.url(queue), messages[limit:])
        return messages[:limit], now

    async def _claim_received(
        self,
        layout: Layout,
        queue: str,
        messages: list[_sqs.Message],
        worker_id: str,
        now: float,
        visibility: int,
    ) -> list[Job]:
        flow = _claim.claim_received(layout, queue, messages, worker_id, now, visibility)
        claimed = await self._run(flow)
        for message, reason in claimed.malformed:
            why = safe_line(reason)  # the text of a foreign body or record: one line
            _logger.warning(
                "Removed malformed message %s from queue %r to its dead-letter queue: %s",
                message.message_id, queue, why,
                extra={"event": "jobs.malformed_message", "queue": queue, "error": why},
            )  # fmt: skip
        for message, job_id in claimed.unknown:
            _logger.info(
                "Deleted message %s from queue %r: job %s has no record (never written, "
                "or past its retention)", message.message_id, queue, job_id,
                extra={"event": "jobs.unknown_job", "queue": queue, "job_id": job_id},
            )  # fmt: skip
        for job in claimed.dead:
            log_event(
                _logger, logging.WARNING, Event.DEAD,
                f"Job {job.name!r} ({job.id}) dead-lettered: {LEASE_EXPIRED_ERROR}", job,
                error=LEASE_EXPIRED_ERROR,
            )  # fmt: skip
        for delivery in claimed.deliveries:
            self._deliveries.add(delivery)
            self._visibility[queue] = _sqs.visibility_for(delivery.job.lease)
        if claimed.errors and not claimed.deliveries:
            raise public_error(claimed.errors[0])
        return [delivery.job for delivery in claimed.deliveries]

    async def _release_claimed(self, step: asyncio.Future[list[Job]]) -> None:
        try:
            jobs = await step
        except Exception:
            return  # nothing was handed out; unclaimed messages come back on their own
        now = self._clock()
        for job in jobs:
            assert job.lease_token is not None
            await self.release(job.id, job.lease_token, CANCELLED_CLAIM, now)

    # -- after a claim -------------------------------------------------------------------

    async def heartbeat(
        self, job_id: str, lease_token: str, lease_until: float, now: float
    ) -> bool:
        delivery = self._deliveries.get(job_id, lease_token)
        flow = _settle.heartbeat(self._layout, delivery, job_id, lease_token, lease_until, now)
        held = await self._run(flow)
        if not held:  # the lease is lost: no outcome will be recorded under this claim
            self._deliveries.pop(job_id, lease_token)
        return held

    async def complete(self, job_id: str, lease_token: str, now: float, result: Any) -> bool:
        text = None if result is None else dump_json(plain_json(result, "result"))
        done = await self._run(_settle.complete(self._layout, job_id, lease_token, now, text))
        delivery = self._deliveries.pop(job_id, lease_token)
        if done and delivery is not None and self._delete_on_complete:
            url = self._layout.url(delivery.job.queue)
            self._background.delete_soon(url, delivery.message.receipt_handle)
        return done

    async def fail(
        self, job_id: str, lease_token: str, error: str, retry_at: float | None, now: float
    ) -> bool:
        delivery = await self._delivery(job_id, lease_token)
        flow = _settle.fail(self._layout, delivery, job_id, lease_token, error, retry_at, now)
        return await self._settled(flow, job_id, lease_token)

    async def release(self, job_id: str, lease_token: str, error: str, now: float) -> bool:
        delivery = await self._delivery(job_id, lease_token)
        flow = _settle.release(self._layout, delivery, job_id, lease_token, error, now)
        return await self._settled(flow, job_id, lease_token)

    async def _delivery(self, job_id: str, lease_token: str) -> Delivery | None:
        """The message that delivered this claim (its queue described), if this store knows."""
        delivery = self._deliveries.get(job_id, lease_token)
        if delivery is not None:
            await self._described(delivery.job.queue)
        return delivery

    async def _settled(self, flow: Flow[bool], job_id: str, lease_token: str) -> bool:
        """Run an outcome's flow; the claim's message is forgotten once the store answered.

        A write that raised is retried by the run (``_lease``): it needs the message
        again, to return it or move it to the dead-letter queue.
        """
        outcome = await self._run(flow)
        self._deliveries.pop(job_id, lease_token)
        return outcome

    # -- operators: the reconciler, dead letters, stats ----------------------------------

    async def reconcile(
        self, *, grace: float = 900.0, queues: Sequence[str] | None = None
    ) -> ReconcileReport:
        """Re-send lost messages, dead-letter redriven jobs; see ``_reconcile``."""
        from ._reconcile import reconcile  # operator calls load on first use (see module)

        layout, names = await self._all_described(queues)
        return await self._run(reconcile(layout, names, self._clock(), grace))

    async def retry(self, job_id: str, now: float) -> bool:
        """Run a dead job again (attempts reset); False if unknown, expired or not dead.

        Its copies in the dead-letter queue are removed (see ``_operations``).
        """
        from ._operations import retry

        layout, _ = await self._all_described(None)
        return await self._run(retry(layout, job_id, now))

    async def dead_letters(self, queue: str | None = None, *, limit: int = 100) -> list[DeadLetter]:
        """Up to ``limit`` messages of the DLQs, with their jobs; see ``_dead_letters``."""
        from ._dead_letters import dead_letters

        layout, names = await self._all_described(None if queue is None else [queue])
        return await self._run(dead_letters(layout, names, self._clock(), limit))

    async def redrive(
        self, queue: str | None = None, *, limit: int | None = None,
        on_progress: Progress | None = None,
    ) -> RedriveReport:  # fmt: skip
        """Send the jobs in the DLQs back to their queues; see ``_operations``."""
        from ._operations import redrive

        layout, names = await self._all_described(None if queue is None else [queue])
        return await self._run(redrive(layout, names, self._clock(), limit, on_progress))

    async def stats(self, queues: Sequence[str] | None = None) -> list[QueueStats]:
        """Per queue: jobs by status and SQS depths; see ``_stats``."""
        from ._stats import stats

        layout, names = await self._all_described(queues)
        return await self._run(stats(layout, names, self._clock()))

    # -- closing -------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Send pending deletes, hand back held messages, close every client."""
        await self._background.aclose()
        if self._aio is not None:
            aio, self._aio = self._aio, None
            await aio.aclose()
        self._boto.close()

    def close(self) -> None:
        """Close the blocking clients (pending SQS work is sent first); see ``aclose``."""
        for flow in self._background.leftovers():
            with contextlib.suppress(AwsError):  # unsent work comes back on its own
                drive(flow, self._boto)
        self._boto.close()
        if self._aio is not None and self._aio.has_open_clients:
            warnings.warn(
                "SqsJobStore.close() cannot close its asyncio clients; await aclose() instead",
                ResourceWarning,
                stacklevel=2,
            )

    async def __aenter__(self) -> SqsJobStore:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.aclose()

    def __enter__(self) -> SqsJobStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # Last, so that ``list`` in the annotations above is the builtin, not this method.
    async def list(self, filter: JobFilter, limit: int, cursor: str | None, now: float) -> JobPage:
        from ._listing import list_jobs

        return await self._run(list_jobs(self._layout, filter, limit, cursor, now))
