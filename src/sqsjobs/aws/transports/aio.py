"""The asyncio transport: aiobotocore clients, the only place sqsjobs opens them.

The store imports this module on its first async call, so producers that only use the
blocking face (``SyncJobQueue``, the CLI, Lambda) never load aiobotocore or aiohttp.
The clients come from the caller's session if given (``aio_session``: an aiobotocore
``AioSession``, or an ``aioboto3.Session``), else from a new ``AioSession`` on the
standard credential chain.

aiobotocore clients belong to the event loop that opened them (their aiohttp sessions
and connections do), and one store may serve several loops in turn: a script calling
``asyncio.run`` twice, pytest-asyncio's loop per test around a shared store fixture.
So the clients are kept per loop, opened on the first call from it, and closed *on
that loop* when it shuts down: opening them also starts a suspended async generator
whose ``finally`` closes them, and ``asyncio.run`` (like ``asyncio.Runner`` and
pytest-asyncio) closes every async generator of a loop before closing the loop
(``loop.shutdown_asyncgens``). Unlike a waiting task, that generator is invisible to
``asyncio.all_tasks()``, so code that waits for all tasks never waits for it.

A loop closed without that step (``loop.close()`` after ``run_until_complete``) leaves
its clients open; they are closed from the next loop that calls, which is safe for a
*closed* loop only: aiohttp then marks its connector closed without touching the loop.
Connections it kept alive cannot be closed without their loop; the garbage collector
closes their sockets (with a ``ResourceWarning``, as for any transport of a loop closed
that way).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import warnings
from collections.abc import AsyncGenerator, Awaitable, Callable
from contextlib import AsyncExitStack
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import aiohttp
from aiobotocore.client import AioBaseClient  # type: ignore[import-untyped]
from aiobotocore.config import AioConfig  # type: ignore[import-untyped]
from aiobotocore.session import AioSession  # type: ignore[import-untyped]
from aiohttp import ClientConnectorError
from botocore.exceptions import ClientError  # type: ignore[import-untyped]
from botocore.utils import get_environ_proxies  # type: ignore[import-untyped]

from ..wire.protocol import Call, Reply, Service
from .boto import new_session
from .endpoint import Endpoint
from .errors import NO_RESPONSE, SDK_FAILURES, from_aws, no_response, sdk_failure, translate
from .tls import checked_context, shared_context
from .unreachable import limit_unreachable_retries

if TYPE_CHECKING:
    from .lean import LeanSender


class AioTransport:
    """Awaitable ``send`` over aiobotocore clients, opened per event loop on first use."""

    def __init__(self, endpoint: Endpoint) -> None:
        self._endpoint = endpoint
        self._session = endpoint.aio_session or new_session(AioSession)
        self._loops: dict[asyncio.AbstractEventLoop, _LoopClients] = {}
        self._warned = False  # the lean path's fallback is said once per store

    async def client(self, service: Service) -> Any:
        return (await self._opened(service))[0]

    async def _opened(self, service: Service) -> tuple[Any, LeanSender | None]:
        loop = asyncio.get_running_loop()
        clients = self._loops.get(loop)
        if clients is None:
            await self._forget_closed_loops()
            clients = self._loops.setdefault(loop, _LoopClients(self._open, self._ready))
        return await clients.client(service)

    def _open(self, service: Service) -> Any:
        """A client's context manager, entered on the loop that will use it: aioboto3's
        ``Session.client`` and aiobotocore's ``create_client`` make the same one."""
        theirs = self._endpoint.config
        connector_args = getattr(theirs, "connector_args", None)  # an AioConfig's own
        ours = AioConfig(connector_args, **self._endpoint.client_options())
        opening = getattr(self._session, "client", None) or self._session.create_client
        return opening(
            service,
            region_name=self._endpoint.region_name,
            endpoint_url=self._endpoint.endpoint_url,
            config=self._endpoint.merged(ours),
        )

    def _ready(self, client: Any) -> LeanSender | None:
        """``client`` set up for the store's calls; the sender of its hot requests, if any."""
        limit_unreachable_retries(client, self._endpoint, (ClientConnectorError,))
        return self._lean_for(client)

    def _lean_for(self, client: Any) -> LeanSender | None:
        """The lean sender of ``client`` when the store opted in and this botocore has
        every name the path uses; else ``None``, and the SDK's pipeline sends it all."""
        if not self._endpoint.lean:
            return None
        try:
            from .lean import LeanSender
            from .lean_guard import missing_names
        except ImportError as gone:  # a name the lean path imports left this botocore
            missing = [str(gone.name or gone)]
        else:
            missing = missing_names(client)
        if missing:
            if not self._warned:
                self._warned = True
                warnings.warn(
                    f"lean=True: this botocore/aiobotocore lacks {', '.join(missing)}; "
                    "every call goes through the SDK's own pipeline instead",
                    RuntimeWarning,
                    stacklevel=2,
                )
            return None
        return LeanSender.of(client)

    async def __call__(self, call: Call) -> Reply:
        try:
            client, lean = await self._opened(call.service)
            if lean is None:
                reply: Reply = await getattr(client, call.operation)(**call.params)
            else:
                reply = await lean(call.operation, call.params)
        except ClientError as error:
            raise translate(error, call.operation) from None
        except NO_RESPONSE as error:
            raise no_response(error, call.operation) from None
        except SDK_FAILURES as error:
            raise sdk_failure(error, call.operation) from None
        return from_aws(reply, client.meta.endpoint_url, call.operation)

    @property
    def has_open_clients(self) -> bool:
        """Whether some loop's clients are still open (that loop has not shut down)."""
        return any(clients.is_open for clients in self._loops.values())

    async def aclose(self) -> None:
        """Close the running loop's clients (and any a closed loop left open)."""
        clients = self._loops.pop(asyncio.get_running_loop(), None)
        if clients is not None:
            await clients.aclose()
        await self._forget_closed_loops()

    async def _forget_closed_loops(self) -> None:
        for loop in [loop for loop in self._loops if loop.is_closed()]:
            await self._loops.pop(loop).aclose()  # a no-op if it closed them at shutdown


class _LoopClients:
    """The clients opened on one event loop, closed on it when it shuts down."""

    def __init__(
        self,
        open_client: Callable[[Service], Any],
        lean_for: Callable[[Any], LeanSender | None],
    ) -> None:
        self._open = open_client
        self._lean_for = lean_for
        self._clients: dict[Service, tuple[Any, LeanSender | None]] = {}
        self._stack = AsyncExitStack()
        self._lock = asyncio.Lock()
        self._keeper: AsyncGenerator[None, None] | None = None

    @property
    def is_open(self) -> bool:
        return bool(self._clients)

    async def client(self, service: Service) -> tuple[Any, LeanSender | None]:
        """The service's client, and the sender of its hot requests (``lean``)."""
        client = self._clients.get(service)
        if client is not None:
            return client
        async with self._lock:
            if service not in self._clients:
                if self._keeper is None:
                    self._keeper = self._until_shutdown()
                    await anext(self._keeper)
                opened = await self._stack.enter_async_context(self._open(service))
                checking_host_names(opened)
                lean = self._lean_for(opened)
                self._clients[service] = (opened, lean)
            return self._clients[service]

    async def _until_shutdown(self) -> AsyncGenerator[None, None]:
        """Suspended until the loop's ``shutdown_asyncgens`` (or ``aclose``) closes it."""
        try:
            yield
        finally:
            await self._close()

    async def aclose(self) -> None:
        if self._keeper is not None:
            await self._keeper.aclose()  # runs the ``finally`` above
        await self._close()

    async def _close(self) -> None:
        """Close every client; a later call on this loop would open new ones."""
        self._clients, self._keeper = {}, None
        await self._stack.aclose()


class UnverifiableProxy(RuntimeError):
    """The endpoint is reached through a proxy, and this aiobotocore's session lacks the
    hooks through which the transport checks the endpoint's certificate there."""


# What ``checking_host_names`` replaces and reads on aiobotocore's ``AIOHTTPSession``.
_SESSION_HOOKS = ("_get_ssl_context", "_create_connector")
_SESSION_SETTINGS = (
    "_verify",
    "_cert_file",
    "_key_file",
    "_max_pool_connections",
    "_connector_args",
)


def checking_host_names(client: Any) -> None:
    """Make an aiobotocore client's aiohttp session verify a server's certificate and
    host name, with the process's one context for its settings (``tls``), whether it
    connects directly or through a proxy. The session makes its connectors when it
    first connects, so a session not yet used is changed in time; any other kind of
    client (a test's fake) is left alone.

    aiobotocore's own connector for a proxied URL skips verification (``ssl=False``
    unless the client has proxy TLS settings) and its context for a direct one skips
    the host name. A session without the hooks replaced here (another aiobotocore) keeps
    its own direct connections, which verify certificates; a client whose endpoint it
    would reach through a proxy is refused here, before any request is sent."""
    if not isinstance(client, AioBaseClient):
        return
    session = client._endpoint.http_session
    if all(hasattr(session, name) for name in (*_SESSION_HOOKS, *_SESSION_SETTINGS)):
        session._get_ssl_context = checked_context
        create = session._create_connector
        # aiobotocore 3 awaits its ``_create_connector``; 2.x calls it: keep its kind.
        made = _aconnector if inspect.iscoroutinefunction(create) else _connector
        session._create_connector = functools.partial(made, session, create)
    elif _proxied(client):
        raise UnverifiableProxy(
            f"{client.meta.endpoint_url} is reached through a proxy (HTTPS_PROXY or the "
            "client's proxies), where this aiobotocore's session would not verify its "
            "certificate; use an aiobotocore whose AIOHTTPSession has "
            f"{' and '.join(_SESSION_HOOKS)}, or an endpoint reached without a proxy"
        )


def _proxied(client: Any) -> bool:
    """Whether botocore sends the client's https requests through a proxy: the
    client's ``proxies``, else the environment's for its endpoint (``NO_PROXY``)."""
    url = client.meta.endpoint_url
    proxies = client.meta.config.proxies or get_environ_proxies(url)
    return urlsplit(url).scheme == "https" and bool(proxies.get("https"))


def _connector(session: Any, create: Callable[[str | None], Any], proxy_url: str | None) -> Any:
    """The connector for one of the session's proxies (``None``: direct), on the shared
    context for its TLS settings; with ``verify=False``, aiobotocore's (unverified).

    Through a proxy, aiohttp opens the endpoint's TLS inside the CONNECT tunnel with the
    connector's context and the endpoint's host name, so the endpoint is verified as
    without a proxy. The same context checks an https proxy's own certificate, as
    botocore does for a client without proxy TLS settings (the transports give none)."""
    if not session._verify:
        return create(proxy_url)
    return _verified(session)


async def _aconnector(
    session: Any, create: Callable[[str | None], Awaitable[Any]], proxy_url: str | None
) -> Any:
    """``_connector`` for an aiobotocore whose ``_create_connector`` is a coroutine."""
    if not session._verify:
        return await create(proxy_url)
    return _verified(session)


def _verified(session: Any) -> Any:
    context = shared_context(session._verify, session._cert_file, session._key_file)
    return aiohttp.TCPConnector(
        limit=session._max_pool_connections, ssl=context, **session._connector_args
    )
