"""The presence records' flows: write one, end one, list the live ones (``wire.presence``).

Listing reads the list index's presence partition, never the table: a ``Query`` of the
entries whose ``expires_at`` is still ahead (the index projects it), page after page,
then a ``BatchGetItem`` of their items, eventually consistent, for what the index does
not project. Its cost follows the workers alive and the records that ran out but which
DynamoDB's TTL has not deleted yet (a filtered entry is still read, at about 100 bytes),
never the jobs the table keeps. An item read back as no longer live (it ran out between
the two reads) or unreadable is left out.
"""

from __future__ import annotations

from ...core.presence import WorkerPresence
from ..wire import presence as wire
from ..wire.layout import Layout
from ..wire.protocol import ConditionFailed, Flow
from .batch_get import get_items


def put_presence(layout: Layout, presence: WorkerPresence) -> Flow[None]:
    yield wire.put_presence(layout.table, presence)


def end_presence(layout: Layout, worker_id: str, now: float) -> Flow[None]:
    """Make the record run out at ``now``; a record already gone stays gone."""
    try:
        yield wire.end_presence(layout.table, worker_id, now)
    except ConditionFailed:
        return


def presences(table: str, now: float) -> Flow[list[WorkerPresence]]:
    """The records live at ``now``, by worker id."""
    keys = []
    start = None
    while True:
        reply = yield wire.query_presences(table, now, start)
        keys += [{"pk": item["pk"]} for item in reply.get("Items", [])]
        start = reply.get("LastEvaluatedKey")
        if start is None:
            break
    if not keys:
        return []
    items = yield from get_items(table, keys)
    found = [
        presence
        for item in items
        if wire.live(item, now) and (presence := wire.presence_from_item(item)) is not None
    ]
    return sorted(found, key=lambda presence: presence.worker_id)
