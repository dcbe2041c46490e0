"""Payloads of a chosen size that read like real ones, for benchmarks and tests of cost.

A cost that depends on a payload's size also depends on how well it compresses (long
payloads are stored compressed), so a string of one repeated letter would price a
kilobyte at almost nothing. ``order_document`` is an order with varied lines (SKUs,
prices, short notes in several scripts): JSON that compresses about as real JSON does,
two and a half to five times. ``random_document`` is base64 of random bytes, which
compresses only to about three quarters (six bits a character): the worst case JSON
text can be, an embedded file. Both are deterministic for a seed, and their
compact JSON (UTF-8) is exactly the size asked for.
"""

from __future__ import annotations

import base64
import json
import random
from typing import Any

__all__ = ["json_size", "order_document", "random_document"]

WORDS = (
    "Grüße",
    "invoice",
    "parcel",
    "Köln",
    "express",
    "warehouse",
    "return",
    "Zoë",
    "gift wrap",
    "fragile",
    "north dock",
    "pallet",
    "label",
    "東京",
)


def json_size(payload: Any) -> int:
    """The payload's size as the size limit counts it: compact JSON, UTF-8."""
    return len(json.dumps(payload, separators=(",", ":"), ensure_ascii=False).encode())


def order_document(size: int, seed: int = 0) -> dict[str, Any]:
    """An order of ``size`` bytes of compact JSON (at least 200)."""
    if size < 200:
        raise ValueError(f"an order document takes at least 200 bytes, not {size}")
    rng = random.Random(seed)
    document: dict[str, Any] = {
        "order": f"ord-{rng.randrange(10**9):09d}",
        "customer": {"name": "Zoë Ångström", "email": "zoe@example.com"},
        "lines": [],
        "memo": "",
    }
    while json_size(document) + 80 < size:
        document["lines"].append(
            {
                "sku": f"SKU-{rng.randrange(10**6):06d}",
                "qty": rng.randrange(1, 9),
                "cents": rng.randrange(99, 99_999),
                "note": " ".join(rng.choice(WORDS) for _ in range(rng.randrange(1, 4))),
            }
        )
    document["memo"] = _letters(rng, size - json_size(document))
    return document


def random_document(size: int, seed: int = 0) -> dict[str, str]:
    """``{"data": "<base64 of random bytes>"}`` of ``size`` bytes of compact JSON."""
    room = size - json_size({"data": ""})
    if room < 0:
        raise ValueError(f"a random document takes at least 11 bytes, not {size}")
    noise = random.Random(seed).randbytes(room)
    return {"data": base64.b64encode(noise).decode()[:room]}


def _letters(rng: random.Random, count: int) -> str:
    """``count`` bytes of ASCII letters and digits (each one byte in JSON)."""
    return "".join(rng.choice("abcdefghijklmnopqrstuvwxyz0123456789") for _ in range(count))
