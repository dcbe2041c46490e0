"""``record_formats``: which record formats a table still holds, and until when.

An upgrade's last step waits for the records of an earlier format to be gone: 0.2's
"drop ``by_status``" once no record of format 1 is left, this release's "reads cost what
is open" once none of format 2 is (CHANGELOG.md). Every record says its format in ``v``,
written by its put and never changed, but no index holds ``v``: the list index projects
what listings need (``wire.index_keys``), and one index per upgrade question would bill
every job a write. So this reads the whole table, a ``Scan`` page after page, asking for
``pk``, ``v``, ``status`` and ``expires_at`` only, and counts each record as

- *open*: not ended; it stays until its retention has run after it ends;
- *ended*: ended, its ``expires_at`` still ahead, when DynamoDB's TTL deletes it (lazily,
  up to days later, which no reader waits for);
- *expired*: past ``expires_at``; every reader takes it for gone, so it holds nothing up.

Items that are no record (payload bodies, limit slots, what a bare ``UpdateItem`` of a job's
key leaves) are counted as scanned, nothing else.

The cost is the table's size: a ``Scan`` bills every item it reads, whole, whatever the
projection returns (which only shortens the replies), at half a read unit per 4 KB summed
over a page (eventually consistent). ``READ_UNITS_PER_1000`` is what 1,000 records with
small payloads cost (``tests/aws/test_record_formats.py`` measures it); long payloads'
body items add their size. The pages are read one after another, so the scan never asks
for more than one page's worth of capacity at a time: a provisioned table's workers keep
theirs. It is an operator's one-off check during an upgrade, never a worker's call.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING, Any

from ...core.lifecycle import TERMINAL
from ...core.times import utc_or_none
from ..wire.items import TTL_ATTRIBUTE
from ..wire.layout import Layout
from ..wire.protocol import Call, Flow

if TYPE_CHECKING:
    from mypy_boto3_dynamodb.type_defs import ScanInputTypeDef

READ_UNITS_PER_1000 = 60  # measured: 1,000 records of small payloads, a whole scan
RECORD_PREFIX = "job#"
ENDED = frozenset(status.value for status in TERMINAL)
Scanned = Callable[[int], object]  # told the items scanned so far, after each page


@dataclass(frozen=True)
class FormatCount:
    """The records of one record format, by where they are in their life."""

    format: int
    open: int = 0
    ended: int = 0
    expired: int = 0
    last_expires_at: datetime | None = None  # of the ended ones: when the last one goes

    @property
    def remaining(self) -> int:
        """Records a reader still sees: open, or ended and not yet expired."""
        return self.open + self.ended


@dataclass(frozen=True)
class RecordFormats:
    """What a table holds, by record format, and which format its store writes."""

    table: str
    writes: int  # the format this store writes (``Layout.record_format``)
    formats: tuple[FormatCount, ...]  # ascending by format, only those found
    items: int  # every item scanned, records or not

    def older_than(self, version: int) -> tuple[FormatCount, ...]:
        """The formats below ``version`` with records a reader still sees."""
        return tuple(f for f in self.formats if f.format < version and f.remaining)


@dataclass
class _Tally:
    open: int = 0
    ended: int = 0
    expired: int = 0
    last: float | None = None

    def add(self, status: str, expires_at: float | None, now: float) -> None:
        if status not in ENDED:
            self.open += 1
        elif expires_at is not None and expires_at <= now:
            self.expired += 1
        else:
            self.ended += 1
            if expires_at is not None and (self.last is None or expires_at > self.last):
                self.last = expires_at


def record_formats(
    layout: Layout, now: float, on_page: Scanned | None = None
) -> Flow[RecordFormats]:
    """Every record of ``layout.table`` counted by format (module docstring), one page of
    the ``Scan`` at a time; ``on_page`` hears the items scanned so far after each."""
    tallies: dict[int, _Tally] = {}
    items = 0
    start: Mapping[str, Any] | None = None
    while True:
        reply = yield scan_page(layout.table, start)
        for item in reply.get("Items", []):
            found = _record(item)
            if found is not None:
                version, status, expires_at = found
                tallies.setdefault(version, _Tally()).add(status, expires_at, now)
        items += len(reply.get("Items", []))
        if on_page is not None:
            on_page(items)
        start = reply.get("LastEvaluatedKey") or None
        if start is None:
            break
    counts = tuple(
        FormatCount(v, t.open, t.ended, t.expired, utc_or_none(t.last))
        for v, t in sorted(tallies.items())
    )
    return RecordFormats(layout.table, layout.record_format, counts, items)


def scan_page(table: str, start: Mapping[str, Any] | None) -> Call:
    """One page of the table, each item's key, format, status and expiry only."""
    params: ScanInputTypeDef = {
        "TableName": table,
        "ProjectionExpression": "#pk, #v, #status, #expires_at",
        "ExpressionAttributeNames": {
            "#pk": "pk",
            "#v": "v",
            "#status": "status",  # a reserved word
            "#expires_at": TTL_ATTRIBUTE,
        },
    }
    if start is not None:
        params["ExclusiveStartKey"] = dict(start)
    return Call("dynamodb", "scan", params)


def _record(item: Mapping[str, Any]) -> tuple[int, str, float | None] | None:
    """A record's format, status and expiry; ``None`` for an item that is no record (or
    whose ``v`` is no format: no release writes one without)."""
    key = item.get("pk", {}).get("S", "")
    status = item.get("status", {}).get("S")
    version = item.get("v", {}).get("N")
    if not key.startswith(RECORD_PREFIX) or status is None or version is None:
        return None
    try:
        expires = item.get(TTL_ATTRIBUTE, {}).get("N")
        return int(version), str(status), None if expires is None else float(expires)
    except ValueError:
        return None
