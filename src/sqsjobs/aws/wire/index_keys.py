"""The list index's keys: where a job's entry lives, computed from the job alone.

The list index ``by_queue`` is keyed ``list_pk`` and ``list_sk =
"{created_at:020.6f}#{id}"`` (written once at put, never changed) and projects only
``phase`` (``open`` until the job ends, then its terminal status), ``name``, ``tenant``
and ``expires_at``. Open work and history are apart: a job is put in its queue's *open*
partition (``list_pk = "{queue}#{shard}"``), and from record format 3 on
(``items.RECORD_FORMATS``), the write that ends it moves it to the *ended* partition of
its terminal status (``"{queue}#{shard}#{status}"``); a dead job run again moves back.
So counting and listing waiting and running jobs, and the reconciler's search for
stranded ones, read open entries only, whatever history the table keeps, and a list of
one terminal status reads that status's entries. A claim changes nothing the index
holds, so it costs the index nothing; the end of a job moves its entry, a delete and a
put (two index writes; format 2 updated ``phase`` in place, one). An index keyed by
status would cost two index writes per status change, and one projecting the payload
would bill the payload's size on every one. Readers that need a job's status or payload
read the records the index points at; they are rare operator calls. The shard count
(``Layout.index_shards``) spreads a queue over partitions (one partition key takes
about 1,000 writes/s); an item records its shard in ``list_pk``, so readers with N
shards find every item written with M <= N: the count may grow on a live table, never
shrink (docs/explanation/scaling.md). Records that ended under format 2 stay in their open
partition, ``phase`` saying how they ended, until their retention ends.

Records written by the previous layout (item version 1) have no ``list_pk`` and live in
the ``by_status`` index instead (``gsi_pk = "{status}#{shard}"``,
``gsi_sk = "{queue}#{created_at:020.6f}#{id}"``). Every status change still writes
``gsi_pk``, so such a record stays correctly listed there for the rest of its life;
readers query both indexes while a table has the old one (``flows.indexes``).
"""

from __future__ import annotations

import zlib
from typing import NamedTuple

from ...core.lifecycle import TERMINAL
from ...core.models import JobStatus

DEFAULT_SHARDS = 4
MAX_SHARDS = 256  # a stats call costs 4 x shards queries per queue; beyond this, add tables
INDEX = "by_queue"
LEGACY_INDEX = "by_status"  # the previous layout's list index (item version 1)
INDEX_PROJECTION = ("phase", "name", "tenant", "expires_at")  # besides the keys
OPEN = "open"  # the index phase of a job that has not ended


class IndexedTable(NamedTuple):
    """A table, its list index's shard count and whether ending writes move entries:
    what a status change needs to compute the job's new index keys without reading the
    record."""

    name: str
    shards: int
    moves: bool = False  # record format 3 or later: ended jobs leave the open partition


def shard(job_id: str, shards: int) -> int:
    """The id's shard among ``shards``: fixed by the id, so no write reads the record."""
    return zlib.crc32(job_id.encode()) % shards


def list_pk(queue: str, shard_no: int) -> str:
    return f"{queue}#{shard_no}"


def ended_list_pk(queue: str, shard_no: int, status: JobStatus) -> str:
    """The partition of a queue's shard holding the jobs that ended in ``status``."""
    return f"{queue}#{shard_no}#{status.value}"


def home(queue: str, job_id: str, shards: int, status: JobStatus) -> str:
    """The ``by_queue`` partition a job in ``status`` belongs in (record format 3)."""
    shard_no = shard(job_id, shards)
    return (
        ended_list_pk(queue, shard_no, status) if status in TERMINAL else list_pk(queue, shard_no)
    )


def list_sk(created_at: float, job_id: str) -> str:
    """Oldest first, ties broken by id: the keyset order of every list cursor."""
    return f"{created_at:020.6f}#{job_id}"


def phase(status: JobStatus) -> str:
    """What the list index knows of a status: ``open``, or how the job ended."""
    return status.value if status in TERMINAL else OPEN


def index_pk(status: JobStatus, shard_no: int) -> str:
    """The previous layout's ``gsi_pk``, still written by every status change."""
    return f"{status.value}#{shard_no}"


def index_sk(queue: str, created_at: float, job_id: str) -> str:
    """The previous layout's ``gsi_sk``: a record without one is not in ``by_status``."""
    return f"{queue}#{created_at:020.6f}#{job_id}"
