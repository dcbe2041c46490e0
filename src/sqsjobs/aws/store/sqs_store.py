"""SqsJobStore: the job store on SQS (delivery) and DynamoDB (the record of truth).

Every method is "which flow, which driver": the async face drives the flows of
``operations`` on aiobotocore (``async_send``: imported on first use; boto3 in threads
where the worker extra is not installed), the ``sync`` face (``blocking``) drives the same
flows on boto3. Both share one ``StoreState``: the layout learned so far, the clock, and
which message delivered each claim. What the async face adds is the worker's side:
claiming (``claims``), the writes after a claim (``settling``), the limit slots
(``slot_calls``), deletes batched and held messages handed back (``background``).

``lambda_mode`` gives the Lambda handler a store of its own over the same state, in
threaded mode, leaving deletes of completed jobs' messages to Lambda.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Collection, Mapping, Sequence
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar, overload

from ...core.models import Job
from ..wire import sqs
from ..wire.protocol import AwsError, Call, Flow, Reply, adrive, drive, public_error
from . import operations
from .async_send import AsyncSend
from .background import Background
from .blocking import SqsSyncView
from .claims import CANCELLED_CLAIM, Claims
from .presence import PresenceCalls
from .settling import Mode, SettleCalls
from .slot_calls import SlotCalls
from .state import StoreState

if TYPE_CHECKING:
    from ...core.batches import BatchStatus
    from ...core.reports import DeadLetter, QueueStats, ReconcileReport, RedriveReport
    from ...core.requests import EnqueueResult, JobFilter, JobPage
    from ..flows.record_formats import RecordFormats, Scanned
    from ..flows.redrive import Progress
    from .config import StoreSettings

__all__ = ["CANCELLED_CLAIM", "SqsJobStore"]

T = TypeVar("T")

DEFAULT_BANDS = (1,)  # one lane: jobs of priority 1 and up run before the default backlog


class SqsJobStore(PresenceCalls, SettleCalls, SlotCalls):
    """Jobs in SQS + DynamoDB: durable, shared by any number of producers and workers.

    See ``docs/explanation/aws-store.md`` for the table layout, the message schema and the request
    budget. Its configuration is one value, ``StoreSettings`` (``settings=``), or the
    keywords that build one; ``store.settings`` is that value. ``create`` makes the
    resources for development and tests; production deploys ``infra/`` and uses
    ``from_stack`` or ``from_env``. ``connect_timeout`` and ``max_attempts`` shorten
    botocore's patient defaults (60 s, five attempts) for callers that must report an
    unreachable endpoint quickly, such as an operator's command. ``record_format`` 1
    writes records that 0.1 releases read too (CHANGELOG.md). ``session`` (boto3),
    ``aio_session`` (aiobotocore's or aioboto3's) and ``config`` (botocore's) are the
    caller's SDK objects: their credentials, event handlers and settings apply to every
    call. ``lean=True`` (or ``SQSJOBS_LEAN=1``) sends the worker's hot calls past the
    SDK's per-call pipeline: less CPU, no hooks (``transports/lean.py``).
    """

    max_payload_bytes: ClassVar[int] = 350 * 1024  # payload + record must fit a 400 KB item

    @overload
    def __init__(self, *, settings: StoreSettings) -> None: ...

    # The keywords: StoreSettings' fields, whose defaults they take; a test keeps the two
    # lists equal (tests/aws/test_store_settings.py).
    @overload
    def __init__(
        self,
        *,
        table_name: str,
        queue_urls: Mapping[str, str],
        dead_letter_queue_urls: Mapping[str, str] | None = ...,
        endpoint_url: str | None = ...,
        region_name: str | None = ...,
        retention: float = ...,
        dead_retention: float = ...,
        wait_time: float = ...,
        resend_after: float = ...,
        clock_skew: float = ...,
        priority_lanes: Mapping[str, Mapping[int, str]] | None = ...,
        index_shards: int = ...,
        clock: Callable[[], float] = ...,
        connect_timeout: float | None = ...,
        max_attempts: int | None = ...,
        record_format: int = ...,
        lean: bool | None = ...,
        session: Any = ...,
        aio_session: Any = ...,
        config: Any = ...,
    ) -> None: ...

    def __init__(self, *, settings: StoreSettings | None = None, **keywords: Any) -> None:
        """From ``settings``, or from keywords that build one (``StoreSettings``'s fields)."""
        from .config import given_settings  # not at import: a Lambda's builds no dataclass

        self._open(StoreState(given_settings(settings, keywords)), Mode())

    def _open(self, state: StoreState, mode: Mode) -> None:
        self._state = state
        self._mode = mode
        self._transport = AsyncSend(state.endpoint, state.boto, threaded=mode.threaded)
        self._background = Background(self._send)
        self._claims = Claims(state, self._run, self._background)
        self.watch_claims = self._claims.watch  # claim refusals, for metrics (``core.store``)
        self.sync = SqsSyncView(state)

    # -- construction --------------------------------------------------------------------

    @classmethod
    def from_env(cls, **kwargs: Any) -> SqsJobStore:
        """From ``SQSJOBS_TABLE`` and ``SQSJOBS_QUEUES="default=URL,high=URL"``.

        The other ``SQSJOBS_*`` variables a stack's outputs map to are read too when set
        (``SQSJOBS_DEAD_LETTER_QUEUES``, ``SQSJOBS_PRIORITY_LANES``, ...; ``config``).

        Args:
            **kwargs: ``StoreSettings`` fields, which win over the environment.

        Raises:
            ValueError: A variable it needs is unset, or a setting is invalid.
        """
        from .config import StoreSettings, env_arguments

        return cls(settings=StoreSettings(**{**env_arguments(), **kwargs}))

    @classmethod
    def from_stack(cls, stack_name: str, **kwargs: Any) -> SqsJobStore:
        """From the outputs of a stack deployed from ``infra/`` (see docs/explanation/aws-store.md).

        One ``DescribeStacks`` per stack, at once, on boto3's credential chain.

        Args:
            stack_name: The stack, or several sharing one table (``"app,app-reports"``:
                a ``sqsjobs`` stack and ``sqsjobs-queue`` stacks), served as one store.
            **kwargs: ``StoreSettings`` fields, which win over the outputs; their
                endpoint and SDK objects are used to read the stack too.

        Raises:
            ValueError: The stacks lack an output, name different tables or shard
                counts, or a setting is invalid.
            JobStoreError: CloudFormation refused the read (no such stack, no access).
        """
        from .config import StoreSettings, arguments_of_stack

        found = arguments_of_stack(stack_name, kwargs)
        return cls(settings=StoreSettings(**{**found, **kwargs}))

    @classmethod
    def create(
        cls,
        prefix: str,
        *,
        queues: Sequence[str] = ("default",),
        max_receive_count: int = 10,
        priority_bands: Sequence[int] = DEFAULT_BANDS,
        fifo: bool | Collection[str] = False,
        **kwargs: Any,
    ) -> SqsJobStore:
        """Create (or find) the table, queues and DLQs for ``prefix``; for dev and tests.

        Production deploys the templates instead (``sqsjobs.infra``), which add alarms,
        policies and a stack policy protecting the table.

        Args:
            prefix: Names the table (``{prefix}-jobs``) and the queues made for it.
            queues: The job queues to make, each with its dead-letter queue.
            max_receive_count: Receives of a message before SQS moves it to the DLQ.
            priority_bands: A priority lane per band (the lowest priority each carries;
                empty: no lanes), redriven to the queue's DLQ.
            fifo: ``True`` makes every queue FIFO, or name the queues that are.
            **kwargs: ``StoreSettings`` fields (``endpoint_url``, ``region_name``, ...).

        Raises:
            ValueError: An invalid prefix, queue name or setting; nothing was made.
            JobStoreError: AWS refused a create (what came before it is kept).
        """
        from .config import StoreSettings
        from .provision import provisioned

        made = provisioned(prefix, queues, max_receive_count, priority_bands, fifo, kwargs)
        urls = {queue: info.url for queue, info in made.queues.items()}
        dead = {q: info.dead_letter_url for q, info in made.queues.items() if info.dead_letter_url}
        if made.lanes and "priority_lanes" not in kwargs:
            kwargs["priority_lanes"] = made.lanes
        settings = StoreSettings(
            table_name=made.table, queue_urls=urls, dead_letter_queue_urls=dead, **kwargs
        )
        store = cls(settings=settings)
        for queue, info in made.queues.items():
            store._state.layout = store._state.layout.with_info(queue, info)
        store._state.layout = store._state.layout._replace(previous_index=made.previous_index)
        return store

    # -- read-only configuration ---------------------------------------------------------

    @property
    def settings(self) -> StoreSettings:
        """What this store was built with (``from_env``, ``from_stack``, ``create`` too)."""
        return self._state.settings

    @property
    def table_name(self) -> str:
        """The DynamoDB table of the job records."""
        return self._state.layout.table

    @property
    def queue_urls(self) -> Mapping[str, str]:
        """Each queue's SQS URL, by queue name."""
        return MappingProxyType(dict(self._state.layout.queue_urls))

    @property
    def dead_letter_queue_urls(self) -> Mapping[str, str]:
        """Each queue's DLQ as far as known, without a request.

        Given to the constructor (``from_stack``, ``from_env``, ``create`` give them), or
        learned from a queue's redrive policy by the first call that needs it: a claim,
        an operator call (reconcile, retry, dead letters, redrive, stats) or
        ``sync.describe(queue)``. A queue not described yet is absent.
        """
        return MappingProxyType(self._state.layout.known_dead_letter_urls())

    # -- drivers -------------------------------------------------------------------------

    async def _send(self, call: Call) -> Reply:
        """The async face's transport (a seam tests may wrap to inject failures)."""
        return await self._transport(call)

    async def _run(self, flow: Flow[T]) -> T:
        try:
            return await adrive(flow, self._send)
        except AwsError as error:
            raise public_error(error) from error.cause

    # -- producer ------------------------------------------------------------------------

    async def put(self, job: Job, fingerprint: str | None) -> EnqueueResult:
        """Write the record, then send its message (``flows.put``)."""
        return await self._run(operations.put_job(self._state, job, fingerprint))

    async def put_many(self, items: Sequence[tuple[Job, str | None]]) -> list[EnqueueResult]:
        """Write ten at a time, records first, then their messages (``flows.put``)."""
        return await self._run(operations.put_jobs(self._state, items))

    async def get(self, job_id: str, now: float) -> Job | None:
        """The job's record (one ``GetItem``); None if unknown or past its retention."""
        return await self._run(operations.get_job(self._state, job_id, now))

    async def put_batch(
        self, batch_id: str, jobs: Sequence[Job], callbacks: Sequence[Job], now: float
    ) -> None:
        """Write a batch (``flows.batches``): its root and shards, its jobs, its callbacks."""
        await self._run(operations.put_batch(self._state, batch_id, jobs, callbacks))

    async def batch_status(self, batch_id: str, now: float) -> BatchStatus | None:
        """How far the batch has come, from its counters; None for an id with no batch."""
        return await self._run(operations.batch_status(self._state, batch_id, now))

    async def pause(self, queue: str, now: float) -> None:
        """Pause ``queue`` for every worker and Lambda handler of the table
        (``flows.pauses``): noticed within seconds, never losing a message."""
        self._state.pauses.learn(await self._run(operations.pause_queue(self._state, queue, now)))

    async def resume(self, queue: str, now: float) -> None:
        """Let ``queue``'s claims start jobs again, within seconds on every worker."""
        self._state.pauses.learn(await self._run(operations.resume_queue(self._state, queue)))

    async def paused(self, now: float) -> Mapping[str, float]:
        """Each paused queue, and when it was paused (one ``GetItem``)."""
        found = await self._run(operations.paused_queues(self._state))
        self._state.pauses.learn(found)
        return found

    async def put_in_transaction(
        self, jobs: Sequence[tuple[Job, str | None]], items: Sequence[Mapping[str, Any]]
    ) -> list[EnqueueResult]:
        """The jobs' records committed with ``items`` (``flows.transaction``)."""
        return await self._run(operations.put_in_transaction(self._state, jobs, items))

    async def cancel(self, job_id: str, now: float, *, by: str | None = None) -> bool:
        """Cancel a job that has not ended; ``by``: who, for its history."""
        return await self._run(operations.cancel_job(self._state, job_id, now, by))

    # -- claiming and after a claim ------------------------------------------------------

    async def claim(
        self, queue: str, worker_id: str, now: float, *, limit: int = 1, wait: float = 0.0
    ) -> list[Job]:
        """Claim up to ``limit`` jobs, long-polling up to ``wait`` seconds; see ``claims``."""
        return await self._claims.claim(queue, worker_id, now, limit, wait)

    # -- operators: the reconciler, dead letters, stats ----------------------------------

    async def reconcile(
        self, *, grace: float = 900.0, queues: Sequence[str] | None = None
    ) -> ReconcileReport:
        """Re-send lost messages, dead-letter redriven jobs; see ``flows.reconcile``."""
        return await self._run(operations.reconcile(self._state, grace, queues))

    async def retry(self, job_id: str, now: float, *, by: str | None = None) -> bool:
        """Run a dead job again (attempts reset); False if unknown, expired or not dead.

        Its copies in the dead-letter queue are removed (see ``flows.redrive``).
        """
        return await self._run(operations.retry(self._state, job_id, now, by))

    async def dead_letters(
        self, queue: str | None = None, *, limit: int = 100, name: str | None = None
    ) -> list[DeadLetter]:
        """Up to ``limit`` messages of the DLQs, with their jobs; see ``flows.dead_letters``."""
        return await self._run(operations.dead_letters(self._state, queue, limit, name))

    async def redrive(
        self,
        queue: str | None = None,
        *,
        limit: int | None = None,
        on_progress: Progress | None = None,
        name: str | None = None,
        by: str | None = None,
    ) -> RedriveReport:
        """Send the jobs in the DLQs back to their queues; see ``flows.redrive``."""
        flow = operations.redrive(self._state, queue, limit, on_progress, name, by)
        return await self._run(flow)

    async def dead_letter_depths(self, queues: Sequence[str] | None = None) -> dict[str, int]:
        """Messages visible in each queue's DLQ, from SQS alone; see ``flows.stats``."""
        return await self._run(operations.dead_letter_depths(self._state, queues))

    async def stats(self, queues: Sequence[str] | None = None) -> list[QueueStats]:
        """Per queue: jobs by status and SQS depths; see ``flows.stats``."""
        return await self._run(operations.stats(self._state, queues))

    async def record_formats(self, *, on_page: Scanned | None = None) -> RecordFormats:
        """Records by format and how long they stay: a table scan (``flows.record_formats``)."""
        return await self._run(operations.record_formats(self._state, on_page))

    effective_delay = staticmethod(sqs.effective_delay)  # whole seconds of visibility

    # -- closing -------------------------------------------------------------------------

    async def wait_cancelled_claims(self) -> None:
        """Wait (``wait_time`` at most) for the receives of cancelled claims: SQS runs them
        on, and what they get goes back to the queue (``claims``). A worker's stop calls it."""
        await self._background.wait_cut_short()

    async def aclose(self) -> None:
        """Send pending deletes, hand back held messages (and cancelled claims'), close clients.

        Call it (or use ``async with``) before the event loop ends: what is left pending
        is safe to lose, but comes back (a message once, a held one after its visibility).
        """
        await self._background.aclose()
        await self._transport.aclose()
        self._state.boto.close()

    def close(self) -> None:
        """Close the blocking clients (pending SQS work is sent first); see ``aclose``.

        For a store used only through its ``sync`` face (or ``with``); one whose async
        face opened clients warns (``ResourceWarning``) that only ``aclose`` closes them.
        """
        for flow in self._background.leftovers():
            with contextlib.suppress(AwsError):  # unsent work comes back on its own
                drive(flow, self._state.boto)
        self._state.boto.close()
        if self._transport.has_open_clients:
            text = "SqsJobStore.close() cannot close its asyncio clients; await aclose() instead"
            warnings.warn(text, ResourceWarning, stacklevel=2)

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
        """A page of the jobs ``filter`` selects, from the list index (``flows.listing``)."""
        return await self._run(operations.list_jobs(self._state, filter, limit, cursor, now))
