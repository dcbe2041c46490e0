"""What both faces of one store share: the layout learned so far, the clock, the claims.

``SqsJobStore`` (async) and its ``sync`` face (blocking) are two drivers over one
``StoreState``: a queue described through either is described for both, and the clients
of the blocking transport are made once. The Lambda handler's store shares it too.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, TypeVar

from ..flows.claim import Claimed, claim_received
from ..flows.describe import describe_missing
from ..transports.boto import BotoTransport
from ..transports.endpoint import Endpoint
from ..wire.layout import Layout
from ..wire.protocol import AwsError, Flow, drive, public_error
from ..wire.sqs import Message
from .deliveries import DeliveryMap
from .pauses import Pauses

if TYPE_CHECKING:
    from .config import StoreSettings

T = TypeVar("T")

UNANSWERED_KEPT = 1000  # unanswered claims remembered per store


class StoreState:
    """One store's configuration and what it learned; safe to share between threads."""

    def __init__(self, settings: StoreSettings) -> None:
        from .config import endpoint_of, layout_of  # with the first store (``sqs_store``)

        self.settings = settings
        self.endpoint: Endpoint = endpoint_of(settings)
        self.layout: Layout = layout_of(settings)
        self.wait = math.ceil(settings.wait_time)  # the longest long poll, in whole seconds
        self.clock: Callable[[], float] = settings.clock
        self.boto = BotoTransport(self.endpoint)
        self.deliveries = DeliveryMap()
        self.pauses = Pauses()  # the fleet's paused queues, as last read (``pauses``)
        # job id -> token of a claim write that got no answer (``flows.unanswered``); the
        # newest ``UNANSWERED_KEPT``, as dict order keeps them
        self.unanswered: dict[str, str] = {}
        self._unanswered_lock = threading.Lock()

    def claimed(
        self,
        layout: Layout,
        queue: str,
        messages: Sequence[Message],
        worker_id: str,
        now: float,
        *,
        event_source: bool,
    ) -> Flow[Claimed]:
        """Claim what ``messages`` deliver (``flows.claim``), told the tokens of this store's
        earlier claim writes that got no answer; remembers this round's."""
        with self._unanswered_lock:
            unanswered = dict(self.unanswered)
        claimed = yield from claim_received(
            layout, queue, messages, worker_id, now, unanswered, event_source=event_source
        )
        with self._unanswered_lock:
            self._note(claimed)
        return claimed

    def _note(self, claimed: Claimed) -> None:
        """Remember the round's unanswered claims; forget those it undid."""
        for job_id in claimed.undone:
            self.unanswered.pop(job_id, None)
        for job_id, token in claimed.unanswered:
            self.unanswered.pop(job_id, None)
            self.unanswered[job_id] = token
        while len(self.unanswered) > UNANSWERED_KEPT:
            del self.unanswered[next(iter(self.unanswered))]

    def described(self, queues: Sequence[str]) -> Flow[Layout]:
        """The layout with every queue in ``queues`` described (each once per store)."""
        found = yield from describe_missing(self.layout, queues)
        for queue, info in found.items():
            self.layout = self.layout.with_info(queue, info)
        return self.layout

    def indexed(self) -> Flow[Layout]:
        """The layout with ``previous_index`` known (found out once per store)."""
        if self.layout.previous_index is None:
            from ..flows.indexes import has_previous_index

            present = yield from has_previous_index(self.layout.table)
            self.layout = self.layout._replace(previous_index=present)
        return self.layout

    def named(self, queues: Sequence[str] | None) -> list[str]:
        """``queues``, or every queue of the store (sorted), for the operator calls."""
        return list(queues) if queues is not None else sorted(self.layout.queue_urls)

    def run_sync(self, flow: Flow[T]) -> T:
        """Drive ``flow`` on boto3; an AWS failure surfaces as botocore's error."""
        try:
            return drive(flow, self.boto)
        except AwsError as error:
            raise public_error(error) from error.cause


class AsyncCalls:
    """A base of each group of ``SqsJobStore``'s async calls (``presence``, ``settling``,
    ``slot_calls``): the state they drive their flows over, and ``_run``, which the store
    itself defines, on its transport."""

    _state: StoreState

    if TYPE_CHECKING:

        async def _run(self, flow: Flow[T]) -> T: ...
