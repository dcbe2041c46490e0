"""SigV4 for the lean path's requests, computed from what is fixed per route.

botocore's ``SigV4Auth.add_auth`` rebuilds everything for every request: the signed
headers are copied into an ``email.message``-based header map (twice: once for the
canonical request, once for the ``Authorization`` header), the URL is split and its
path normalised and quoted, and the signing key is derived with four HMACs. For one
route of the lean path the URL and every signed header but the date (and a session
token) are the same on every request, so ``plan`` computes their canonical form once
and ``Signer.headers`` does only what changes: the body's hash, the string to sign and
its HMAC, with the derived key kept while its date, region, service and secret stay.

It is the same algorithm on the same inputs (``tests/aws/test_lean_sign.py`` compares
it with ``SigV4Auth`` header for header); anything it does not cover (a streaming
checksum, payload signing turned off, another signer class) stays with botocore.
"""

from __future__ import annotations

import hmac
from hashlib import sha256
from typing import Any, NamedTuple
from urllib.parse import quote, urlsplit

from botocore.auth import (  # type: ignore[import-untyped]
    SIGNED_HEADERS_BLACKLIST,
    SigV4Auth,
)
from botocore.utils import normalize_url_path  # type: ignore[import-untyped]

ALGORITHM = "AWS4-HMAC-SHA256"


class Plan(NamedTuple):
    """One route's canonical request, but for the date, the token and the body's hash."""

    start: str  # "POST\n<path>\n<query>\n"
    fixed: tuple[tuple[str, str], ...]  # signed headers: lower-case name, canonical value
    region: str
    service: str


def plan(url: str, headers: tuple[tuple[str, str], ...], region: str, service: str) -> Plan:
    """The fixed part of the canonical request for ``url`` with ``headers``, as botocore
    builds it (``SigV4Auth.canonical_request``) for a POST without query parameters."""
    parts = urlsplit(url)
    path = quote(normalize_url_path(parts.path), safe="/~")
    query = SigV4Auth(None, service, region)._canonical_query_string_url(parts)
    values: dict[str, list[str]] = {}
    for name, value in headers:
        lowered = name.lower()
        if lowered not in SIGNED_HEADERS_BLACKLIST:
            values.setdefault(lowered, []).append(_trimmed(value))
    if "host" not in values:
        values["host"] = [signed_host(url)]
    fixed = tuple((name, ",".join(found)) for name, found in values.items())
    return Plan(f"POST\n{path}\n{query}\n", fixed, region, service)


class Signer:
    """Signs with one client's credentials; keeps the last derived signing key."""

    def __init__(self) -> None:
        self._scope = ("", "", "", "")  # date, region, service, secret of ``_key``
        self._key = b""

    def headers(self, plan: Plan, credentials: Any, body: bytes, now: Any) -> dict[str, str]:
        """The headers ``SigV4Auth.add_auth`` adds, in its order, for ``now`` (a naive
        UTC ``datetime``, as botocore's ``get_current_datetime`` gives)."""
        stamp = timestamp(now)
        date = stamp[:8]
        added = {"X-Amz-Date": stamp}
        signed = [*plan.fixed, ("x-amz-date", stamp)]
        token = credentials.token
        if token:
            added["X-Amz-Security-Token"] = token
            signed.append(("x-amz-security-token", _trimmed(token)))
        signed.sort()
        names = ";".join(name for name, _ in signed)
        canonical = "".join(
            (
                plan.start,
                "".join(f"{name}:{value}\n" for name, value in signed),
                "\n",
                names,
                "\n",
                sha256(body).hexdigest(),
            )
        )
        scope = f"{date}/{plan.region}/{plan.service}/aws4_request"
        digest = sha256(canonical.encode()).hexdigest()
        to_sign = f"{ALGORITHM}\n{stamp}\n{scope}\n{digest}"
        key = self._signing_key(date, plan.region, plan.service, credentials.secret_key)
        signature = hmac.new(key, to_sign.encode(), sha256).hexdigest()
        added["Authorization"] = (
            f"{ALGORITHM} Credential={credentials.access_key}/{scope}, "
            f"SignedHeaders={names}, Signature={signature}"
        )
        return added

    def _signing_key(self, date: str, region: str, service: str, secret: str) -> bytes:
        """``SigV4Auth.signature``'s four HMACs, once per day, region, service and secret."""
        scope = (date, region, service, secret)
        if scope != self._scope:
            key = hmac.new(f"AWS4{secret}".encode(), date.encode(), sha256).digest()
            for part in (region, service, "aws4_request"):
                key = hmac.new(key, part.encode(), sha256).digest()
            self._scope, self._key = scope, key
        return self._key


def timestamp(now: Any) -> str:
    """``now`` as ``SIGV4_TIMESTAMP`` writes it (``strftime`` costs ten times as much)."""
    return (
        f"{now.year:04d}{now.month:02d}{now.day:02d}"
        f"T{now.hour:02d}{now.minute:02d}{now.second:02d}Z"
    )


def signed_host(url: str) -> str:
    """The ``host`` botocore signs for ``url`` (no port where it is the scheme's default),
    which is also the ``Host`` header a request to it must carry."""
    host: str = SigV4Auth(None, "", "").headers_to_sign(_Bare(url))["host"]
    return host


def _trimmed(value: str) -> str:
    """SigV4's Trimall, as ``SigV4Auth._header_value``."""
    return " ".join(value.split())


class _Bare:
    """A request with a URL and no headers, for ``SigV4Auth.headers_to_sign``'s host."""

    def __init__(self, url: str) -> None:
        self.url = url
        self.headers: dict[str, str] = {}
