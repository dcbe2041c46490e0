"""The calls after a claim (heartbeat, complete, fail, release) on the async face.

Each drives its flow of ``flows.settle`` with the message that delivered the claim, when
this store made it (``StoreState.deliveries``), and forgets that message once the store
answered. Written here, as a base of ``SqsJobStore`` (and so of the Lambda handler's
twin, ``lambda_mode``), so the store's module keeps to construction and the operators.
A run's latest progress (``ctx.progress``) rides with each of these writes, never a
write of its own (``core.progress``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, NamedTuple

from pydantic import JsonValue

from ...core.progress import checked_progress
from ...core.validation import dump_json, plain_json
from ..flows import settle
from ..flows.claim import Delivery
from ..wire.layout import Layout
from .background import Background
from .state import AsyncCalls

if TYPE_CHECKING:
    from ..wire.protocol import Flow


class Mode(NamedTuple):
    threaded: bool = False  # drive boto3 from threads, never load aiobotocore (Lambda)
    delete_on_complete: bool = True  # Lambda deletes the messages it is not told of


class SettleCalls(AsyncCalls):
    """``heartbeat``, ``complete``, ``fail`` and ``release`` of ``SqsJobStore``."""

    keeps_progress = True  # each takes ``progress=`` (``worker.progress``)

    _mode: Mode
    _background: Background

    async def heartbeat(
        self,
        job_id: str,
        lease_token: str,
        lease_until: float,
        now: float,
        *,
        progress: JsonValue | None = None,
    ) -> bool:
        """Extend the lease and the message's visibility; ``progress``: the run's latest,
        written in the same ``UpdateItem`` (here and in the outcomes below)."""
        delivery = self._state.deliveries.get(job_id, lease_token)
        layout = self._layout_for(delivery)
        flow = settle.heartbeat(
            layout, delivery, job_id, lease_token, lease_until, now, _progress(progress)
        )
        held = await self._run(flow)
        if not held:  # the lease is lost: no outcome will be recorded under this claim
            self._state.deliveries.pop(job_id, lease_token)
        return held

    async def complete(
        self,
        job_id: str,
        lease_token: str,
        now: float,
        result: Any,
        *,
        progress: JsonValue | None = None,
    ) -> bool:
        """Record the job completed, False if the lease was lost; its message is deleted
        soon after, with others (``background``), or by Lambda in its handler."""
        text = None if result is None else dump_json(plain_json(result, "result"))
        delivery = self._state.deliveries.get(job_id, lease_token)
        claimed = None if delivery is None else delivery.job
        flow = settle.complete(
            self._state.layout, job_id, lease_token, now, text, claimed, _progress(progress)
        )
        done = await self._run(flow)
        delivery = self._state.deliveries.pop(job_id, lease_token)
        if done and delivery is not None and self._mode.delete_on_complete:
            url = self._layout_for(delivery).url(delivery.job.queue)
            self._background.delete_soon(url, delivery.message.receipt_handle)
        return done

    async def fail(
        self,
        job_id: str,
        lease_token: str,
        error: str,
        retry_at: float | None,
        now: float,
        *,
        progress: JsonValue | None = None,
    ) -> bool:
        """Record a failed attempt: retried at ``retry_at`` (the message hidden until
        then), else dead; False if the lease was lost. See ``settle``."""
        delivery = await self._delivery(job_id, lease_token)
        layout = self._layout_for(delivery)
        flow = settle.fail(
            layout, delivery, job_id, lease_token, error, retry_at, now, _progress(progress)
        )
        return await self._recorded(flow, job_id, lease_token)

    async def release(
        self,
        job_id: str,
        lease_token: str,
        error: str,
        now: float,
        *,
        run_at: float | None = None,
        progress: JsonValue | None = None,
    ) -> bool:
        """Back to queued now, or delayed until ``run_at`` (a deferred start); see ``settle``."""
        delivery = await self._delivery(job_id, lease_token)
        layout = self._layout_for(delivery)
        flow = settle.release(
            layout, delivery, job_id, lease_token, error, now, run_at, _progress(progress)
        )
        return await self._recorded(flow, job_id, lease_token)

    def _layout_for(self, delivery: Delivery | None) -> Layout:
        layout = self._state.layout
        return layout if delivery is None else delivery.layout(layout)

    async def _delivery(self, job_id: str, lease_token: str) -> Delivery | None:
        """The message that delivered this claim (its queue described), if this store knows."""
        delivery = self._state.deliveries.get(job_id, lease_token)
        if delivery is not None:
            await self._run(self._state.described([delivery.job.queue]))
        return delivery

    async def _recorded(self, flow: Flow[bool], job_id: str, lease_token: str) -> bool:
        """Run an outcome's flow; the claim's message is forgotten once the store answered.

        A write that raised is retried by the run (``sqsjobs.worker.lease``): it needs the
        message again, to return it or move it to the dead-letter queue.
        """
        outcome = await self._run(flow)
        self._state.deliveries.pop(job_id, lease_token)
        return outcome


def _progress(progress: JsonValue | None) -> str | None:
    """Progress as written: compact JSON text, checked again as the store's own input."""
    return None if progress is None else dump_json(checked_progress(progress))
