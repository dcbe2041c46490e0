"""Whether botocore's retry handler would pass a lean request's first reply as it is.

After every attempt botocore emits ``needs-retry`` and its standard-mode handler builds
a retry context and runs its checkers (attempts left, transient status codes and
exceptions, throttling and modeled error codes, DynamoDB's CRC32 of the body) through
a chain of awaitables. For a first attempt answered 2xx with no error in the reply,
the only checker that can ask for a retry is the CRC32 one: the error-code checkers
read the reply's ``Error``, the transient one a 5xx status or an exception, and the
attempts checker only records the client's maximum (and, when that maximum is a single
attempt, marks the reply, which is left to botocore).

``FirstReplies.settled`` does exactly that work for such a reply, and only while the
event's handlers are the standard handler alone, as the client registered it (beside
the store's ``UnreachableRetries``, which acts on a failed connection only): any other
handler (or another retry mode) and every later attempt, error and 5xx go through the
event, the handler and its quota as before. The quota's release on success
is an ``after-call`` handler, which the lean path still emits.
"""

from __future__ import annotations

from typing import Any
from zlib import crc32

from aiobotocore.retries.standard import (  # type: ignore[import-untyped]
    AioRetryHandler,
    AioRetryPolicy,
    AioStandardRetryConditions,
)

from .unreachable import UnreachableRetries

CHECKSUM_HEADER = "x-amz-crc32"  # botocore's ``RetryDDBChecksumError``


class FirstReplies:
    """First attempts' replies of one client that botocore's handler would not retry."""

    def __init__(self, client: Any) -> None:
        self._emitter = getattr(client.meta.events, "_emitter", None)
        self._checksums = client.meta.service_model.service_name == "dynamodb"
        self._standard: object = None  # the handler list last found to be the standard one
        self._max_attempts = 0

    def settled(
        self, event_name: str, http: Any, parsed: Any, content: bytes, context: Any
    ) -> bool:
        """True if the standard handler would not retry this first attempt's reply.

        Its one lasting effect, the ``max`` it notes for the ``amz-sdk-request`` header,
        is noted as it would be.
        """
        if http.status_code >= 300 or "Error" in parsed or not self._standard_for(event_name):
            return False
        if self._checksums:
            checksum = http.headers.get(CHECKSUM_HEADER)
            if checksum is not None and crc32(content) & 0xFFFFFFFF != int(checksum):
                return False
        retries = context["retries"]
        retries["max"] = max(retries.get("max", 0), self._max_attempts)
        return True

    def _standard_for(self, event_name: str) -> bool:
        """Whether ``event_name``'s handlers are the standard retry handler alone.

        The emitter caches each event's handler list and drops its cache whenever a
        handler is registered or unregistered: the list found standard is kept, and a
        new list is examined when the cache holds another one.
        """
        cache = getattr(self._emitter, "_lookup_cache", None)
        handlers = cache.get(event_name) if isinstance(cache, dict) else None
        if handlers is None:
            return False
        if handlers is not self._standard:
            max_attempts = _standard_max_attempts(handlers)
            if max_attempts is None:
                return False
            self._standard, self._max_attempts = handlers, max_attempts
        return self._max_attempts > 1


def _standard_max_attempts(handlers: Any) -> int | None:
    """The maximum attempts of the standard handler if it is the only one (but for
    ``UnreachableRetries``, which has no say over a reply); else ``None``.

    This runs after a request was sent: every private name is read with a default, so a
    botocore that renamed one sends the reply through the event (``None``), never raises.
    """
    handlers = [h for h in handlers if not isinstance(h, UnreachableRetries)]
    if len(handlers) != 1:
        return None
    (handler,) = handlers
    owner: Any = getattr(handler, "__self__", None)
    if type(owner) is not AioRetryHandler:
        return None
    if getattr(handler, "__func__", None) is not AioRetryHandler.needs_retry:
        return None
    policy = getattr(owner, "_retry_policy", None)
    if type(policy) is not AioRetryPolicy:
        return None
    conditions = getattr(policy, "_retry_checker", None)
    if type(conditions) is not AioStandardRetryConditions:
        return None
    checker = getattr(conditions, "_max_attempts_checker", None)
    max_attempts = getattr(checker, "_max_attempts", None)
    return max_attempts if type(max_attempts) is int else None
