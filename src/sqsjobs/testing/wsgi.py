"""The WSGI shapes the emulator's layers share: the app type, and a body read that keeps it.

Each layer in front of moto (the API filter, the request counter, the billing meter)
may read a request's body, and moto reads it again after them: ``request_body`` puts
what it read back.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterable
from typing import Any

WsgiApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]


def request_body(environ: dict[str, Any]) -> bytes:
    """Read the request body and put it back for the emulator."""
    length = int(environ.get("CONTENT_LENGTH") or 0)
    data: bytes = environ["wsgi.input"].read(length)
    environ["wsgi.input"] = io.BytesIO(data)
    return data
