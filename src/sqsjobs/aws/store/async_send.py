"""The async face's transport: aiobotocore where installed, else boto3 in threads.

aiobotocore comes with the ``worker`` extra. The base install (producers, Lambda) has
only boto3, so there the async face, like Lambda mode, runs each call in a thread
(``asyncio.to_thread``): ``JobQueue`` over the store works in either install, at the cost
of a thread per call in flight. Only a missing aiobotocore stack switches; any other
import failure is raised.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from ..transports.boto import BotoTransport
from ..transports.endpoint import Endpoint
from ..wire.protocol import Call, Reply

if TYPE_CHECKING:
    from ..transports.aio import AioTransport

AIO_STACK = frozenset({"aioboto3", "aiobotocore", "aiohttp"})


class AsyncSend:
    """Awaitable ``send``; ``threaded`` (Lambda) never loads aiobotocore."""

    def __init__(self, endpoint: Endpoint, boto: BotoTransport, *, threaded: bool) -> None:
        self._endpoint = endpoint
        self._boto = boto
        self._threaded = threaded
        self._aio: AioTransport | None = None

    async def __call__(self, call: Call) -> Reply:
        if self._aio is None and not self._threaded:
            try:
                from ..transports.aio import AioTransport
            except ModuleNotFoundError as missing:
                if (missing.name or "").partition(".")[0] not in AIO_STACK:
                    raise
                self._threaded = True
            else:
                self._aio = AioTransport(self._endpoint)
        if self._threaded or self._aio is None:
            return await asyncio.to_thread(self._boto, call)
        return await self._aio(call)

    @property
    def has_open_clients(self) -> bool:
        """Whether some event loop's aiobotocore clients are still open."""
        return self._aio is not None and self._aio.has_open_clients

    async def aclose(self) -> None:
        """Close the running loop's aiobotocore clients (the boto3 ones are the state's)."""
        if self._aio is not None:
            aio, self._aio = self._aio, None
            await aio.aclose()
