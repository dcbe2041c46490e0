"""The asyncio transport: aioboto3 clients, the only place sqsjobs imports aioboto3.

The store imports this module on its first async call, so producers that only use the
blocking face (``SyncJobQueue``, the CLI, Lambda) never load aioboto3 or aiohttp.
aiobotocore clients belong to the event loop that opened them: a store serves one loop.
"""

from __future__ import annotations

import asyncio
from contextlib import AsyncExitStack
from typing import Any

import aioboto3  # type: ignore[import-untyped]
from aiobotocore.config import AioConfig  # type: ignore[import-untyped]
from aiobotocore.session import AioSession  # type: ignore[import-untyped]
from botocore.exceptions import ClientError  # type: ignore[import-untyped]

from ._transport import (
    NO_RESPONSE,
    Call,
    Endpoint,
    Reply,
    Service,
    new_session,
    no_response,
    translate,
)


class AioTransport:
    """Awaitable ``send`` over aioboto3 clients, opened on first use, closed by ``aclose``."""

    def __init__(self, endpoint: Endpoint) -> None:
        self._endpoint = endpoint
        self._session = aioboto3.Session(
            botocore_session=new_session(AioSession), region_name=endpoint.region_name
        )
        self._stack = AsyncExitStack()
        self._clients: dict[Service, Any] = {}
        self._lock = asyncio.Lock()

    async def client(self, service: Service) -> Any:
        client = self._clients.get(service)
        if client is not None:
            return client
        async with self._lock:
            if service not in self._clients:
                self._clients[service] = await self._stack.enter_async_context(
                    self._session.client(
                        service,
                        endpoint_url=self._endpoint.endpoint_url,
                        config=AioConfig(**self._endpoint.client_options()),
                    )
                )
            return self._clients[service]

    async def __call__(self, call: Call) -> Reply:
        method = getattr(await self.client(call.service), call.operation)
        try:
            reply: Reply = await method(**call.params)
        except ClientError as error:
            raise translate(error, call.operation) from None
        except NO_RESPONSE as error:
            raise no_response(error, call.operation) from None
        return reply

    async def aclose(self) -> None:
        self._clients = {}
        await self._stack.aclose()
