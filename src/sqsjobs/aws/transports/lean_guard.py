"""What the lean path checks before it sends anything: the private names it needs, and
headers that cannot write headers of their own.

``missing_names`` runs when a client opens, before its first request: a botocore that
renamed one of them sends through its own pipeline instead (``aio``), so no call ever
fails halfway, after a record was written and before its message was sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from aiobotocore.client import AioBaseClient  # type: ignore[import-untyped]

# What the lean path reads or calls on a client beyond its public API, by owner.
PRIVATE = {
    "client": ("_endpoint", "_request_signer"),
    "endpoint": (
        "http_session",
        "_response_parser_factory",
        "_update_retries_context",
        "_needs_retry",
        "_add_modeled_error_fields",
    ),
    "signer": ("get_auth_instance", "region_name"),
}
UNSAFE = re.compile(rb"[\r\n\0]")  # what would end a header or the request early


def missing_names(client: Any) -> list[str]:
    """The private names of ``PRIVATE`` that ``client`` lacks (none for another kind of
    client, which the lean path leaves to the ordinary one)."""
    if not isinstance(client, AioBaseClient):
        return []
    owners = {"client": client}
    owners["endpoint"] = getattr(client, "_endpoint", None)
    owners["signer"] = getattr(client, "_request_signer", None)
    return [
        f"{owner}.{name}"
        for owner, names in PRIVATE.items()
        for name in names
        if not hasattr(owners[owner], name)
    ]


def refuse_unsafe(headers: Mapping[str, Any]) -> None:
    """A ``ValueError`` for a header whose name or value holds a CR, LF or NUL (a
    credential or a header of the caller's that would write headers of its own)."""
    for name, value in headers.items():
        for part in (name.encode(), value if isinstance(value, bytes) else str(value).encode()):
            if UNSAFE.search(part):
                raise ValueError(f"Header {name!r} holds a CR, LF or NUL; nothing was sent")
