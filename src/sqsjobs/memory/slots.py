"""The memory store's limit slots: the ``LimitStore`` contract for one process.

Each limit key maps to its held slots, ``{slot: (holder, until)}``; a slot is free when
absent or when its ``until`` has passed, the rule the DynamoDB conditions write
(``aws/wire/slots``). Slots live apart from the records, so no listing or count sees them.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence

from ..core.store import SlotTaken


class MemorySlots:
    """Held slots per limit key, under a lock of their own (a take is one decision)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[str, dict[int, tuple[str, float]]] = {}

    def take(
        self, key: str, order: Sequence[int], holder: str, until: float, now: float
    ) -> SlotTaken:
        with self._lock:
            slots = self._held.setdefault(key, {})
            ends: list[float] = []
            for slot in order:
                held = slots.get(slot)
                if held is None or held[1] < now:
                    slots[slot] = (holder, until)
                    return SlotTaken(slot, None)
                ends.append(held[1])
            return SlotTaken(None, min(ends) if ends else None)

    def extend(self, key: str, slot: int, holder: str, until: float) -> bool:
        with self._lock:
            slots = self._held.get(key, {})
            if slots.get(slot, ("", 0.0))[0] != holder:
                return False
            slots[slot] = (holder, until)
            return True

    def free(self, key: str, slot: int, holder: str) -> bool:
        with self._lock:
            slots = self._held.get(key, {})
            if slots.get(slot, ("", 0.0))[0] != holder:
                return False
            del slots[slot]
            if not slots:  # per-tenant keys come and go: keep only the held ones
                del self._held[key]
            return True
