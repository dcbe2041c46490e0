"""Which requests reach the dashboard: the Host asked for, an action's origin and its size.

The dashboard has no login of its own on 127.0.0.1, and a browser will send a page's
requests to it on that page's behalf: a site that rebinds its own name to 127.0.0.1
(DNS rebinding) is same-origin with the dashboard as far as the browser can tell, so it
can read every page and post every form with the right cookie and token. What it cannot
change is the ``Host`` header, which carries its own name. So the dashboard answers only
the loopback names (127.0.0.1, localhost, ::1, on any port) and the ``allowed_hosts`` a
deployment adds (the name a reverse proxy or a host app serves it under), 400 otherwise.

An action (a POST) must also come from the dashboard's own origin: an ``Origin`` header,
when the browser sends one, must be the scheme, host and port the request was made to,
and ``Sec-Fetch-Site`` must not say ``cross-site`` or ``same-site``; else 403. The CSRF
token stays the main check; these refuse what a browser says came from elsewhere.

An action's body is a form of a few fields, so it is refused above ``MAX_BODY_BYTES``:
by its ``Content-Length`` before any of it is read, and a body without one (chunked) is
read only until it passes the limit. The body is read here, then handed to the route.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable
from urllib.parse import urlsplit

from starlette.requests import ClientDisconnect, Request
from starlette.types import Message, Receive

from ...core.validation import refusal

LOOPBACK = frozenset({"127.0.0.1", "localhost", "::1"})
ANY = "*"  # allowed_hosts=["*"]: any Host, for a host app that checks Host itself
MAX_BODY_BYTES = 4096
DEFAULT_PORTS = {"http": 80, "https": 443}
NAME = re.compile(r"[a-z0-9_-]+(\.[a-z0-9_-]+)*")
ALLOW_HINT = (
    "to serve it under another name, list that name in make_dashboard(allowed_hosts=[...]) "
    "or give it to sqsjobs dashboard --allowed-host NAME"
)
SITES_REFUSED = frozenset({"cross-site", "same-site"})

Refusal = tuple[int, str]  # an HTTP status and the plain text that says why


def host_name(text: str) -> str | None:
    """``text`` as names are compared: lower case, no final dot, IPv6 compressed and bare.

    ``None`` when it is no host name: empty, with a port, a path, spaces or a scheme.
    """
    name = text.lower().removesuffix(".")
    if name.startswith("[") and name.endswith("]"):
        return _ipv6(name[1:-1])
    if ":" in name:
        return _ipv6(name)
    return name if NAME.fullmatch(name) else None


def _ipv6(text: str) -> str | None:
    try:
        return ipaddress.IPv6Address(text).compressed
    except ValueError:
        return None


def split_host(value: str) -> tuple[str, int | None] | None:
    """A ``Host`` header's name and port (``None``: none given); ``None`` if malformed."""
    if value.startswith("["):
        end = value.find("]") + 1
        name, rest = (value[:end], value[end:]) if end else (value, "")
    else:
        name, colon, port = value.partition(":")
        rest = colon + port
    digits = rest[1:]
    if rest and not (rest[0] == ":" and digits.isascii() and digits.isdigit()):
        return None
    normal = host_name(name)
    if normal is None or (digits and int(digits) > 65535):
        return None
    return normal, int(digits) if digits else None


def allowed_names(given: Iterable[str], what: str = "allowed_hosts") -> frozenset[str] | None:
    """The names ``given`` adds to the loopback ones, checked; ``None`` for any (``*``)."""
    if isinstance(given, (str, bytes)) or not isinstance(given, Iterable):
        raise refusal(given, what, "a list of host names, such as ['ops.example.com']", None)
    names = {_allowed_name(entry, what) for entry in given}
    return None if ANY in names else frozenset(names)


def _allowed_name(entry: object, what: str) -> str:
    allowed = "a host name such as 'ops.example.com' or an IP address"
    if entry == ANY:
        return ANY
    if not isinstance(entry, str):
        raise refusal(entry, f"each of {what}", allowed, None)
    try:
        text = entry if entry.isascii() else entry.encode("idna").decode("ascii")
    except UnicodeError:
        raise refusal(entry, f"each of {what}", allowed, None) from None
    name = host_name(text)
    if name is not None:
        return name
    head, colon, port = text.rpartition(":")
    if colon and port.isdigit() and host_name(head) is not None:
        allowed = "a host name without a port (any port is answered)"
    raise refusal(entry, f"each of {what}", allowed, None)


class Fence:
    """The checks above, for one dashboard's names."""

    def __init__(self, allowed: frozenset[str] | None) -> None:
        self.names = None if allowed is None else LOOPBACK | allowed

    def host_refusal(self, request: Request) -> Refusal | None:
        """A 400 unless the request's ``Host`` is one this dashboard answers for."""
        value = request.headers.get("host")
        if value is None:
            return 400, "Bad Request: the request has no Host header; this dashboard needs one."
        found = split_host(value)
        if found is not None and (self.names is None or found[0] in self.names):
            return None
        answered = ", ".join(sorted(self.names or LOOPBACK))
        return 400, (
            f"Bad Request: this dashboard does not answer for Host {value[:200]!r}. It answers "
            f"for {answered} (any port); {ALLOW_HINT}."
        )

    def action_refusal(self, request: Request) -> Refusal | None:
        """A 403 for an action from another site, a 413 for one declared too large."""
        site = request.headers.get("sec-fetch-site", "").lower()
        if site in SITES_REFUSED:
            return 403, (
                f"Forbidden: the browser says this request was not made by this dashboard's "
                f"own pages (Sec-Fetch-Site: {site}); actions are taken from them only."
            )
        origin = request.headers.get("origin")
        if origin is not None and _origin(origin) != own_origin(request):
            return 403, (
                f"Forbidden: an action must come from this dashboard's own pages, not from "
                f"Origin {origin[:200]!r}."
            )
        return _length_refusal(request.headers.get("content-length"))


def own_origin(request: Request) -> tuple[str, str, int | None] | None:
    """The scheme, host and port this request was made to (the Host already checked)."""
    found = split_host(request.headers.get("host", ""))
    if found is None:
        return None
    scheme = request.scope.get("scheme", "http")
    return scheme, found[0], found[1] if found[1] is not None else DEFAULT_PORTS.get(scheme)


def _origin(text: str) -> tuple[str, str, int | None] | None:
    """An ``Origin`` header's scheme, host and port; ``None`` for ``null`` or a malformed one."""
    try:
        parts = urlsplit(text)
        port = parts.port
    except ValueError:
        return None
    if parts.path or parts.query or parts.fragment or parts.username is not None:
        return None
    name = host_name(parts.hostname or "")
    if name is None:
        return None
    scheme = parts.scheme.lower()
    return scheme, name, port if port is not None else DEFAULT_PORTS.get(scheme)


def _length_refusal(declared: str | None) -> Refusal | None:
    if declared is None:
        return None
    if not (declared.isascii() and declared.isdigit()):
        return 400, f"Bad Request: Content-Length must be a number of bytes, got {declared[:40]!r}."
    if int(declared) > MAX_BODY_BYTES:
        return 413, too_large(f"{int(declared)} bytes")
    return None


def too_large(size: str) -> str:
    return (
        f"Payload Too Large: an action's form is at most {MAX_BODY_BYTES} bytes; "
        f"this request's body is {size}."
    )


async def read_body(receive: Receive) -> bytes | None:
    """The request's body, read up to ``MAX_BODY_BYTES``; ``None`` once it is longer.

    Raises ``ClientDisconnect`` if the client goes away first, as Starlette's own read does.
    """
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientDisconnect()
        chunk: bytes = message.get("body", b"")
        size += len(chunk)
        if size > MAX_BODY_BYTES:
            return None
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def replaying(body: bytes, receive: Receive) -> Receive:
    """A receive channel that gives ``body`` first, then whatever ``receive`` gives."""
    given = False

    async def again() -> Message:
        nonlocal given
        if given:
            return await receive()
        given = True
        return {"type": "http.request", "body": body, "more_body": False}

    return again
