"""Idempotency keys and fingerprints: what makes a duplicate producer harmless.

A key is scoped to ``(queue, tenant, key)``, no tenant being a scope of its own, so one
tenant reusing another's raw key gets its own job instead of a conflict that names (and
so reveals) the other tenant's job. Within its scope a key is bound, by the first
enqueue, to a fingerprint of the request's name, tenant and payload. A later enqueue
with the same key and fingerprint is a duplicate (the existing job is returned); a
different fingerprint is a conflict.
"""

from __future__ import annotations

import hashlib
import json

from pydantic import JsonValue

from .errors import JobConfigError
from .validation import check_job_name, check_tenant


def fingerprint(name: str, tenant: str | None, payload: JsonValue) -> str:
    """SHA-256 of canonical JSON (sorted keys), so key order in the payload does not matter."""
    canonical = json.dumps(
        {"name": name, "tenant": tenant, "payload": payload},
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        allow_nan=False,
    )
    return hashlib.sha256(canonical.encode()).hexdigest()


def job_idempotency_key(name: str, key: str, *, tenant: str | None = None) -> str:
    """A key scoped by job name and tenant: ``t/{tenant}/{name}/{key}`` or ``g/{name}/{key}``.

    Use it when one natural id (an order id, a webhook event id) feeds several job kinds
    or tenants, so that their keys can never collide.
    """
    check_job_name(name)
    if not isinstance(key, str) or not key or not _printable(key):
        raise JobConfigError(
            "invalid_option",
            f"Invalid idempotency key part {key!r}: must be 1+ printable ASCII characters "
            "[\\x21-\\x7e] (no spaces or control characters)",
        )
    if ".." in key:
        raise JobConfigError(
            "invalid_option", f"Invalid idempotency key part {key!r}: must not contain '..'"
        )
    scope = "g" if tenant is None else f"t/{check_tenant(tenant)}"
    composed = f"{scope}/{name}/{key}"
    if len(composed) > 255:
        raise JobConfigError(
            "invalid_option",
            f"Composed idempotency key is {len(composed)} characters; the limit is 255",
        )
    return composed


def _printable(text: str) -> bool:
    return all("\x21" <= ch <= "\x7e" for ch in text)
