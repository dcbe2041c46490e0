"""Jobs in an ASGI app's lifespan: a queue for request handlers, a worker drained on shutdown.

``JobsLifespan`` wraps any ASGI app (Starlette, FastAPI, Litestar, ...). At startup it
puts the queue in the lifespan state (``request.state.jobs`` in Starlette and FastAPI)
and starts the worker, if one is given; at shutdown it stops the worker with ``grace``
so in-flight jobs finish or are released before the server exits, never burning an
attempt on a deploy.

A ``MemoryJobStore`` in production loses every queued job when the process exits and is
invisible to other replicas; the wrapper logs a warning when it sees one there.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from ..core.validation import seconds
from ..memory.store import MemoryJobStore
from ..observe.log import Event, default_logger, log_event
from ..producer.queue import JobQueue
from ..worker.job_worker import JobWorker

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

PRODUCTION_VARIABLES = ("SQSJOBS_ENV", "APP_ENV", "ENVIRONMENT", "ENV")
AWS_RUNTIME_VARIABLES = ("AWS_EXECUTION_ENV", "ECS_CONTAINER_METADATA_URI_V4")


def looks_like_production(environ: MutableMapping[str, str] | None = None) -> bool:
    """True when the environment says production, or the process runs on ECS or Lambda."""
    env = os.environ if environ is None else environ
    if any(env.get(name, "").lower() in ("prod", "production") for name in PRODUCTION_VARIABLES):
        return True
    return any(env.get(name) for name in AWS_RUNTIME_VARIABLES)


class JobsLifespan:
    """ASGI middleware that attaches ``queue`` to the app and runs ``worker`` beside it."""

    def __init__(
        self,
        app: ASGIApp,
        queue: JobQueue,
        *,
        worker: JobWorker | None = None,
        grace: float = 5.0,
        state_key: str = "jobs",
        production: bool | None = None,
        logger: logging.Logger | None = None,
    ) -> None:
        if worker is not None and worker.queue is not queue:
            raise ValueError("worker must be built on the same JobQueue as the app's")
        self.app = app
        self.queue = queue
        self.worker = worker
        self.grace = seconds(grace, "grace", code=None)
        self.state_key = state_key
        self.logger = default_logger(logger)
        in_production = looks_like_production() if production is None else production
        if in_production and isinstance(queue.store, MemoryJobStore):
            log_event(
                self.logger,
                logging.WARNING,
                Event.MEMORY_STORE_IN_PRODUCTION,
                "MemoryJobStore in production: queued jobs are lost when this process exits "
                "and other replicas never see them; use sqsjobs.aws.SqsJobStore",
            )

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "lifespan":
            await self.app(scope, receive, send)
            return

        async def lifespan_receive() -> Message:
            message = await receive()
            if message["type"] == "lifespan.startup":
                self._startup(scope)
            elif message["type"] == "lifespan.shutdown" and self.worker is not None:
                await self.worker.stop(self.grace)
            return message

        await self.app(scope, lifespan_receive, send)

    def _startup(self, scope: Scope) -> None:
        state = scope.get("state")
        if state is not None:
            state[self.state_key] = self.queue
        if self.worker is not None:
            self.worker.start()
