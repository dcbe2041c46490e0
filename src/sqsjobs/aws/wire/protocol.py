"""The protocol between flows and transports: calls, flows, AWS errors and the two drivers.

A *flow* is a generator that yields what it needs done and receives the reply:

- ``yield Call(...)`` sends one request; the reply is botocore's response dict, or the
  failure is thrown into the flow as an ``AwsError`` (``ConditionFailed`` for a refused
  conditional write), so a flow reads like ordinary code with ``try``/``except``;
- ``yield Parallel(calls)`` sends several independent requests; the reply is a list with,
  per call, its response dict or its ``AwsError`` (nothing is thrown), because a batch of
  conditional claims expects some of them to be refused.

``drive`` runs a flow on a blocking ``send`` (boto3), ``adrive`` on an awaitable one
(aiobotocore); they are the only code written twice. A transport (``aws.transports``) turns
botocore's errors into ``AwsError``; ``AwsError`` never leaves ``sqsjobs.aws``: the store
re-raises the botocore error it carries (``public_error``), so callers see the familiar
exception.

This module is stdlib only, like the request builders and the flows: importing them loads
neither boto3 nor asyncio (``adrive`` imports asyncio when it first runs).
"""

from __future__ import annotations

import contextlib
import queue
import threading
from collections.abc import Awaitable, Callable, Generator, Mapping
from typing import Any, Literal, NamedTuple, TypeVar

from ...core.errors import JobStoreError, JobStoreThrottledError, retryable

T = TypeVar("T")
MAX_PARALLEL = 10  # threads the blocking driver uses for one Parallel step
WAKE_EVERY = 0.25  # seconds between the waiting thread's checks for a signal

Service = Literal["dynamodb", "sqs", "cloudformation"]
Reply = dict[str, Any]


class Call(NamedTuple):
    """One AWS request: ``getattr(client_for(service), operation)(**params)``."""

    service: Service
    operation: str
    params: Mapping[str, Any]


class Parallel(NamedTuple):
    """Independent calls a driver may send concurrently; replies come back in order."""

    calls: tuple[Call, ...]


Flow = Generator[Call | Parallel, Any, T]
Send = Callable[[Call], Reply]  # a blocking transport


class AwsError(Exception):
    """A request AWS refused after botocore's own retries; ``cause`` is botocore's error.

    ``retryable``: whether the same call may pass later, where the transport knows it (an
    SDK failure before anything was sent: no credentials is final, a credential provider
    that failed to refresh is not); ``None`` leaves it to ``core.errors.retryable``.
    """

    def __init__(
        self,
        code: str,
        message: str,
        operation: str,
        cause: Exception,
        *,
        retryable: bool | None = None,
    ) -> None:
        super().__init__(f"{operation}: {code}: {message}")
        self.code = code
        self.message = message
        self.operation = operation
        self.cause = cause
        self.retryable = retryable


class ConditionFailed(AwsError):
    """A conditional write was refused; ``item`` is the record as it was (ALL_OLD), if any."""

    def __init__(
        self, code: str, message: str, operation: str, cause: Exception, item: Reply | None
    ) -> None:
        super().__init__(code, message, operation, cause)
        self.item = item


class Throttled(AwsError):
    """AWS kept throttling after botocore's retries: back off before trying again."""


def api_name(operation: str) -> str:
    """A client method's name as AWS's API spells it: ``put_item`` is ``PutItem``."""
    return "".join(part[:1].upper() + part[1:] for part in operation.split("_"))


def public_error(error: AwsError) -> JobStoreError:
    """What a caller outside ``sqsjobs.aws`` sees for an AWS failure: a ``JobStoreError``
    (``JobStoreThrottledError`` for throttling) naming the AWS operation and code, with
    botocore's error as its ``__cause__``; raise it ``from error.cause``."""
    throttled = isinstance(error, Throttled)
    kind = JobStoreThrottledError if throttled else JobStoreError
    operation = getattr(error.cause, "operation_name", None) or api_name(error.operation)
    said = retryable(error.cause) if error.retryable is None else error.retryable
    again = throttled or (not isinstance(error, ConditionFailed) and said)
    public = kind(str(operation), error.code, error.message, retryable=again)
    public.__cause__ = error.cause
    return public


def drive(flow: Flow[T], send: Callable[[Call], Reply]) -> T:
    """Run ``flow`` to its result with a blocking ``send``; ``Parallel`` calls overlap.

    They overlap in threads (boto3 clients are thread-safe; ``BotoTransport`` makes them
    under a lock), so ``SyncJobQueue.enqueue_many``'s ten conditional puts per group take
    about one round trip, as they do on the async face.
    """
    try:
        step = next(flow)
        while True:
            if isinstance(step, Parallel):
                step = flow.send(_in_threads(send, step.calls))
                continue
            try:
                reply = send(step)
            except AwsError as error:
                step = flow.throw(error)
            else:
                step = flow.send(reply)
    except StopIteration as done:
        result: T = done.value
        return result


async def adrive(flow: Flow[T], send: Callable[[Call], Awaitable[Reply]]) -> T:
    """Run ``flow`` to its result with an awaitable ``send``; ``Parallel`` calls overlap."""
    import asyncio  # here, so that the flows load without asyncio (a blocking producer)

    try:
        step = next(flow)
        while True:
            if isinstance(step, Parallel):
                replies = await asyncio.gather(*(_aattempt(send, c) for c in step.calls))
                step = flow.send(list(replies))
                continue
            try:
                reply = await send(step)
            except AwsError as error:
                step = flow.throw(error)
            else:
                step = flow.send(reply)
    except StopIteration as done:
        result: T = done.value
        return result


def _in_threads(send: Callable[[Call], Reply], calls: tuple[Call, ...]) -> list[Reply | AwsError]:
    """The calls' replies in order, ``MAX_PARALLEL`` at a time, in daemon threads.

    An interrupt (Ctrl-C in an operator's command) ends the wait at once: the calls not
    yet started are dropped, and those in flight are left to their daemon threads, which
    the interpreter does not wait for at exit. Threads of a ``ThreadPoolExecutor`` are
    joined at exit, so a call to a slow or silent endpoint held the command for its read
    timeout and retries after the operator pressed Ctrl-C. Dropping a call is what a
    killed process does, which every flow already survives (conditional writes).
    """
    if len(calls) < 2:
        return [_attempt(send, call) for call in calls]
    return _Batch(send, calls).run()


class _Batch:
    """One ``Parallel`` step on the blocking driver (see ``_in_threads``)."""

    def __init__(self, send: Callable[[Call], Reply], calls: tuple[Call, ...]) -> None:
        self.send = send
        self.calls = calls
        self.replies: list[Reply | AwsError] = [{}] * len(calls)
        self.waiting: queue.SimpleQueue[int] = queue.SimpleQueue()
        self.answered: queue.SimpleQueue[BaseException | None] = queue.SimpleQueue()

    def run(self) -> list[Reply | AwsError]:
        for index in range(len(self.calls)):
            self.waiting.put(index)
        for _ in range(min(len(self.calls), MAX_PARALLEL)):
            threading.Thread(target=self._serve, name="sqsjobs-parallel", daemon=True).start()
        try:
            for _ in self.calls:
                failed = self._next_answer()
                if failed is not None:
                    raise failed
        except BaseException:
            self._drop_waiting()
            raise
        return self.replies

    def _serve(self) -> None:
        with contextlib.suppress(queue.Empty):
            while True:
                index = self.waiting.get_nowait()
                try:
                    self.replies[index] = _attempt(self.send, self.calls[index])
                except BaseException as error:  # not AWS's: the caller raises it
                    self.answered.put(error)
                    return
                self.answered.put(None)

    def _next_answer(self) -> BaseException | None:
        """The next answer; the wait wakes now and then, so a signal's handler runs."""
        while True:
            with contextlib.suppress(queue.Empty):
                return self.answered.get(timeout=WAKE_EVERY)

    def _drop_waiting(self) -> None:
        with contextlib.suppress(queue.Empty):
            while True:
                self.waiting.get_nowait()


def _attempt(send: Callable[[Call], Reply], call: Call) -> Reply | AwsError:
    try:
        return send(call)
    except AwsError as error:
        return error


async def _aattempt(send: Callable[[Call], Awaitable[Reply]], call: Call) -> Reply | AwsError:
    try:
        return await send(call)
    except AwsError as error:
        return error
