"""The store's background SQS work: batched deletes and handing back held messages.

Both exist to save requests (``DeleteBuffer``, ``HeldMessages``) and both are safe to
lose: a delete never sent means the message comes back once and claim discards it (its
record is terminal); a held message never handed back becomes visible again when its
visibility timeout ends. ``aclose``/``close`` still send what is pending, so a clean
shutdown leaves nothing to come back.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from ...observe.log import LOGGER_NAME
from ..flows.messages import delete_all, hand_back
from ..wire.protocol import AwsError, Call, Flow, Reply, adrive
from ..wire.sqs import MAX_BATCH, Message
from .held_messages import HOLD, HeldMessages

_logger = logging.getLogger(LOGGER_NAME)

DELETE_WINDOW = 0.5  # seconds finished jobs wait to share one DeleteMessageBatch


class DeleteBuffer:
    """Receipt handles of finished jobs waiting to share a ``DeleteMessageBatch``."""

    def __init__(self) -> None:
        self._pending: dict[str, list[str]] = {}
        self._lock = threading.Lock()

    def add(self, url: str, handle: str) -> list[str] | None:
        """Queue a delete; a full batch for ``url`` comes back to be sent at once."""
        with self._lock:
            pending = self._pending.setdefault(url, [])
            pending.append(handle)
            if len(pending) < MAX_BATCH:
                return None
            del self._pending[url]
            return pending

    def take_all(self) -> dict[str, list[str]]:
        with self._lock:
            pending, self._pending = self._pending, {}
            return pending

    def __bool__(self) -> bool:
        with self._lock:
            return bool(self._pending)


class Background:
    """The deletes and held messages of one store, sent by timers on the running loop."""

    def __init__(self, send: Callable[[Call], Awaitable[Reply]]) -> None:
        self._send = send
        self.deletes = DeleteBuffer()
        self.held = HeldMessages()
        self._urls: dict[str, str] = {}
        self._tasks: set[asyncio.Future[Any]] = set()
        self._delete_timer: asyncio.TimerHandle | None = None
        self._hold_timers: dict[str, asyncio.TimerHandle] = {}
        self._loop: asyncio.AbstractEventLoop | None = None  # the one the timers are on

    def _running_loop(self) -> asyncio.AbstractEventLoop:
        """The running loop; timers set on an earlier one (a store outlives ``asyncio.run``)
        will never fire, so they are dropped and what they waited for is timed anew."""
        loop = asyncio.get_running_loop()
        if loop is not self._loop:
            for timer in [self._delete_timer, *self._hold_timers.values()]:
                if timer is not None:
                    timer.cancel()
            self._delete_timer, self._hold_timers, self._loop = None, {}, loop
        return loop

    def delete_soon(self, url: str, handle: str) -> None:
        loop = self._running_loop()
        full = self.deletes.add(url, handle)
        if full is not None:
            self.spawn(self._drive(delete_all(url, full)))
            if not self.deletes and self._delete_timer is not None:
                self._delete_timer.cancel()  # the window belonged to deletes just sent
                self._delete_timer = None
        elif self._delete_timer is None:
            self._delete_timer = loop.call_later(DELETE_WINDOW, self._flush_deletes)

    def _flush_deletes(self) -> None:
        self._delete_timer = None
        for url, handles in self.deletes.take_all().items():
            self.spawn(self._drive(delete_all(url, handles)))

    def hold(self, queue: str, url: str, messages: list[Message]) -> None:
        """Keep messages received beyond a claim's limit for the next claims."""
        if not messages:
            return
        self._urls[queue] = url
        self._running_loop()
        self.held.hold(queue, messages, time.monotonic())
        if queue not in self._hold_timers:
            self._schedule_expiry(queue, time.monotonic() + HOLD)

    async def take_held(self, queue: str, limit: int) -> list[Message]:
        """Up to ``limit`` held messages for a claim; none held, those past ``HOLD`` go
        back to the queue first, so the claim's receive can have them at once.

        Their timer hands them back as a rule, but a timer set on an event loop that has
        ended never fires (a worker run under one ``asyncio.run``, ``run_once`` under the
        next): without this the next claim would find them in flight until their
        visibility timeout ended, about a minute.
        """
        now = time.monotonic()
        taken = self.held.take(queue, limit, now)
        if not taken:
            stale, _ = self.held.expire(queue, now)
            if stale:
                await self._drive(hand_back(self._urls[queue], stale))
        return taken

    def _schedule_expiry(self, queue: str, at: float) -> None:
        delay = max(0.0, at - time.monotonic())
        loop = asyncio.get_running_loop()
        self._hold_timers[queue] = loop.call_later(delay, self._expire_held, queue)

    def _expire_held(self, queue: str) -> None:
        del self._hold_timers[queue]
        stale, due = self.held.expire(queue, time.monotonic())
        if stale:
            self.spawn(self._drive(hand_back(self._urls[queue], stale)))
        if due is not None:
            self._schedule_expiry(queue, due)

    def spawn(self, coroutine: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _drive(self, flow: Flow[None]) -> None:
        try:
            await adrive(flow, self._send)
        except AwsError as error:
            _logger.info(
                "Background SQS request failed (%s); the messages come back on their own",
                error,
            )

    def leftovers(self) -> list[Flow[None]]:
        """Flows for everything pending, for a close to send; clears it all."""
        for timer in [self._delete_timer, *self._hold_timers.values()]:
            if timer is not None:
                timer.cancel()
        self._delete_timer, self._hold_timers = None, {}
        flows = [delete_all(url, h) for url, h in self.deletes.take_all().items()]
        held = self.held.take_all()
        return flows + [hand_back(self._urls[q], ms) for q, ms in held.items()]

    async def aclose(self) -> None:
        for flow in self.leftovers():
            await self._drive(flow)
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
