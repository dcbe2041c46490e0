"""The store's background SQS work: batched deletes, handing back held messages, and
the receives of cancelled claims.

Deletes and held messages exist to save requests (``DeleteBuffer``, ``HeldMessages``)
and both are safe to lose: a delete never sent means the message comes back once and
claim discards it (its record is terminal); a held message never handed back becomes
visible again when its visibility timeout ends. ``aclose``/``close`` still send what is
pending, so a clean shutdown leaves nothing to come back.

A receive cannot be taken back. SQS keeps a ``ReceiveMessage`` running after its client
gave up on it (a cancelled task, a closed connection, an exited process) and hands it
the messages that arrive meanwhile, hidden for the visibility timeout from everyone
else: a job enqueued just after a worker stopped, or the one its drain released, would
wait about 30 s. So a receive whose claim is cancelled runs on here (``uninterrupted``),
and what it brings goes straight back to the queue (visibility 0, one batch), unclaimed.
``wait_cut_short`` lets a stopping worker outlive those receives: a long poll's wait
(``wait_time``, 20 s at most) bounds it.
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
# Beyond its wait, how long a cut-short receive may take to answer (the request's round
# trip; SQS answers a long poll within a second of its WaitTimeSeconds).
ANSWER_MARGIN = 5.0
# A claim's receive of up to so many messages (``flows.messages.receive`` and its kin).
Receive = Callable[[int], Awaitable[list[Message]]]


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
        self._tasks: set[asyncio.Future[Any]] = set()
        # The work cancelled claims left running, with when it should be over (monotonic).
        self._cut_short: dict[asyncio.Future[Any], float] = {}
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

    async def messages_for(
        self, url: str, limit: int, receive: Receive, wait: int
    ) -> tuple[list[Message], bool]:
        """Up to ``limit`` messages of ``url`` for a claim, and whether a receive brought them.

        Held messages first; else one receive (``receive(size)``, waiting up to ``wait``
        seconds) of ten, or of ``limit`` while holding has not paid lately, whose messages
        beyond ``limit`` are held for the next claims.
        """
        held = await self.take_held(url, limit)
        if held:
            return held, False
        size = self.held.receive_size(url, limit, time.monotonic())
        messages = await self.uninterrupted(receive(size), url, wait)
        self.hold(url, messages[limit:])
        return messages[:limit], True

    def hold(self, url: str, messages: list[Message]) -> None:
        """Keep messages received from ``url`` beyond a claim's limit for the next claims."""
        if not messages:
            return
        self._running_loop()
        self.held.hold(url, messages, time.monotonic())
        if url not in self._hold_timers:
            self._schedule_hold_check(url, time.monotonic() + HOLD)

    async def take_held(self, url: str, limit: int) -> list[Message]:
        """Up to ``limit`` held messages for a claim; none held, those past ``HOLD`` go
        back to the queue first, so the claim's receive can have them at once.

        Their timer hands them back as a rule, but a timer set on an event loop that has
        ended never fires (a worker run under one ``asyncio.run``, ``run_once`` under the
        next): without this the next claim would find them in flight until their
        visibility timeout ended, about a minute.
        """
        now = time.monotonic()
        taken = self.held.take(url, limit, now)
        if not taken:
            stale, _ = self.held.take_overdue(url, now)
            if stale:
                await self._drive(hand_back(url, stale))
        return taken

    def _schedule_hold_check(self, url: str, at: float) -> None:
        delay = max(0.0, at - time.monotonic())
        loop = asyncio.get_running_loop()
        self._hold_timers[url] = loop.call_later(delay, self._release_overdue_held, url)

    def _release_overdue_held(self, url: str) -> None:
        del self._hold_timers[url]
        stale, due = self.held.take_overdue(url, time.monotonic())
        if stale:
            self.spawn(self._drive(hand_back(url, stale)))
        if due is not None:
            self._schedule_hold_check(url, due)

    def spawn(self, coroutine: Coroutine[Any, Any, None], *, until: float | None = None) -> None:
        """Run ``coroutine`` in the background; ``until`` (monotonic) marks it as work a
        cancelled claim left, which ``wait_cut_short`` waits for until then."""
        task = asyncio.ensure_future(coroutine)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        if until is not None:
            self._cut_short[task] = until
            task.add_done_callback(self._forget_cut_short)

    def _forget_cut_short(self, task: asyncio.Future[Any]) -> None:
        self._cut_short.pop(task, None)

    async def uninterrupted(
        self, receive: Awaitable[list[Message]], url: str, wait: int
    ) -> list[Message]:
        """The messages of ``receive`` (a ``ReceiveMessage`` on ``url`` waiting up to
        ``wait`` seconds); if the caller is cancelled first, the receive runs on and
        whatever it brings is handed back to the queue at once."""
        until = time.monotonic() + wait + ANSWER_MARGIN
        task = asyncio.ensure_future(receive)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            self.spawn(self._hand_back_when_received(task, url), until=until)
            raise

    async def _hand_back_when_received(
        self, receive: asyncio.Future[list[Message]], url: str
    ) -> None:
        try:
            await asyncio.wait([receive])
        except asyncio.CancelledError:
            receive.cancel()  # the loop is ending: nothing can hand its messages back
            raise
        if receive.cancelled() or receive.exception() is not None:
            return  # nothing received: nothing hidden
        messages = receive.result()
        if messages:
            await self._drive(hand_back(url, messages))
            _logger.info("Handed back %d message(s) a cancelled long poll received", len(messages))

    async def wait_cut_short(self) -> None:
        """Wait for the work cancelled claims left (their receives, the hand-back of what
        those received, the release of jobs claimed meanwhile), each for as long as a
        receive can take: a stopping worker calls this so nothing it received after its
        stop began stays hidden."""
        loop = asyncio.get_running_loop()
        for task in [t for t in self._cut_short if t.get_loop() is not loop]:
            del self._cut_short[task]  # its loop has ended, and the receive with it
        if not self._cut_short:
            return
        longest = max(self._cut_short.values()) - time.monotonic()
        _logger.info(
            "Waiting up to %.0fs for %d cancelled long poll(s) to end: what SQS still "
            "hands them goes back to the queue at once",
            max(0.0, longest - ANSWER_MARGIN),
            len(self._cut_short),
        )
        while self._cut_short:
            left = max(self._cut_short.values()) - time.monotonic()
            if left <= 0:
                return  # the network is stuck: what those receives took comes back later
            await asyncio.wait(list(self._cut_short), timeout=left)

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
        return flows + [hand_back(url, messages) for url, messages in held.items()]

    async def aclose(self) -> None:
        for flow in self.leftovers():
            await self._drive(flow)
        await self.wait_cut_short()
        for task in list(self._cut_short):
            task.cancel()  # past its time: its messages come back at their visibility timeout
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)
