"""An endpoint nothing answers at is reported after one retry, not after the whole budget.

botocore's standard retry mode spends every attempt of a call (five, with exponential
backoff of up to 1, 2, 4 and 8 seconds between them) on any transient failure. That is
right for throttling, a 5xx or a connection dropped mid-request (a write may have been
applied; a retry is how the caller learns which). It is wasted on a connection that was
never made: a refused port, an unknown host name, a connect timeout. Nothing was sent,
and a wrong endpoint URL or a stopped local emulator does not start answering within
seconds, so a producer waited 9 to 18 s to be told what one refused connection said.

``UnreachableRetries`` is a ``needs-retry`` handler (botocore's event system, its public
extension point) registered ahead of the retry mode's own: after ``CONNECT_ATTEMPTS``
attempts that could not connect, it raises the connection error, which ends the call as
the retry mode's last attempt would have. Earlier attempts, and every other failure, are
left to the retry mode, its backoff and its quota. A caller whose botocore ``Config``
sets ``retries`` chose their own policy: their clients get no such handler.
"""

from __future__ import annotations

import socket
from typing import Any

from botocore.client import BaseClient  # type: ignore[import-untyped]
from botocore.exceptions import (  # type: ignore[import-untyped]
    ConnectTimeoutError,
    EndpointConnectionError,
)

from .endpoint import Endpoint

# The first try and one retry: a blip (a DNS hiccup, a lost SYN) gets a second chance.
CONNECT_ATTEMPTS = 2
Causes = tuple[type[BaseException], ...]


class UnreachableRetries:
    """Ends a call whose attempts could not connect, once ``attempts`` of them failed so.

    botocore raises ``EndpointConnectionError`` only for a connection it could not make
    (``causes`` ``None``). aiobotocore also raises it for a connection reset mid-request,
    which may follow a write, so that one is left to retry: ``causes`` are then what its
    error wraps when the connection itself failed (aiohttp's connector errors).
    """

    def __init__(self, causes: Causes | None, attempts: int) -> None:
        self.causes: Causes | None = None if causes is None else (socket.gaierror, *causes)
        self.attempts = attempts

    def __call__(
        self, attempts: int = 1, caught_exception: BaseException | None = None, **_: Any
    ) -> None:
        if (
            caught_exception is not None
            and attempts >= self.attempts
            and self.never_connected(caught_exception)
        ):
            raise caught_exception
        return None  # no opinion: the retry mode decides

    def never_connected(self, error: BaseException) -> bool:
        """Whether ``error`` says the connection was never made, so nothing was sent."""
        if isinstance(error, ConnectTimeoutError):
            return True
        if not isinstance(error, EndpointConnectionError):
            return False
        return self.causes is None or isinstance(error.kwargs.get("error"), self.causes)


def limit_unreachable_retries(client: Any, endpoint: Endpoint, causes: Causes | None) -> None:
    """Register ``UnreachableRetries`` on ``client`` (a botocore or aiobotocore client).

    A client's events are its own copy of its session's, so a caller's session is not
    changed. Anything that is not a botocore client (a test's fake) is left alone.
    """
    if not isinstance(client, BaseClient) or _their_retries(endpoint.config):
        return
    service = client.meta.service_model.service_id.hyphenize()
    client.meta.events.register_first(
        f"needs-retry.{service}",
        UnreachableRetries(causes, CONNECT_ATTEMPTS),
        unique_id=f"sqsjobs-unreachable-{service}",
    )


def _their_retries(config: Any) -> bool:
    """Whether the caller's botocore ``Config`` says how to retry: then it is theirs."""
    return config is not None and getattr(config, "retries", None) is not None
