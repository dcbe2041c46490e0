"""The limit slots' flows: take one of a limit's slots, extend it, free it (``wire.slots``).

A take tries the slots in the caller's (random) order and stops at the first it holds:
one conditional ``PutItem`` when a slot is free, one per slot tried when none is. Each
refusal returns the slot's item (ALL_OLD), so a take that found none knows, without a
read, when the earliest lease ends. A take whose response was lost and whose retry was
refused finds itself the holder: that slot is its own.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..wire import slots
from ..wire.layout import Layout
from ..wire.protocol import ConditionFailed, Flow

# ``sqsjobs.core.store.SlotTaken``'s fields (no asyncio here)
Taken = tuple[int | None, float | None]


def take_slot(
    layout: Layout, key: str, order: Sequence[int], holder: str, until: float, now: float
) -> Flow[Taken]:
    ends: list[float] = []
    for slot in order:
        try:
            yield slots.take(layout.table, key, slot, holder, until, now)
        except ConditionFailed as held:
            who, ends_at = slots.holder_of(held.item)
            if who == holder:
                return (slot, None)
            if ends_at is not None:
                ends.append(ends_at)
            continue
        return (slot, None)
    return (None, min(ends) if ends else None)


def extend_slot(layout: Layout, key: str, slot: int, holder: str, until: float) -> Flow[bool]:
    try:
        yield slots.extend(layout.table, key, slot, holder, until)
    except ConditionFailed:
        return False
    return True


def free_slot(layout: Layout, key: str, slot: int, holder: str) -> Flow[bool]:
    try:
        yield slots.free(layout.table, key, slot, holder)
    except ConditionFailed:
        return False
    return True
