"""The reconciler: repairs what a crash or the redrive policy left between record and message.

Passes per queue (and one for the open batches):

1. *Redriven*: messages the redrive policy moved to the DLQ (their runs kept dying, e.g.
   out of memory, before anything was recorded). A running record whose lease is over
   is dead-lettered (``dead_letters.inspect``, shared with ``dead_letters`` and the
   redrive); the messages stay in the DLQ for inspection and redrive.
2. *Stale*: records that should have a message but were not claimed for longer than
   ``grace``: queued since ``updated_at``, delayed past ``run_at``, running past
   ``lease_until``. Each gets a fresh message (and ``resent_at``, so the next pass
   waits another ``grace`` before sending again). This is what saves a job whose
   producer died between ``PutItem`` and ``SendMessage``.

3. *Waiting for ended parents*: a job waiting (``enqueue(after=...)``) since before the
   grace period whose parents have ended (a crash between a parent's ending write and
   its children's release) is released or cancelled, as that ending would have done
   (``waiting.settle_stranded``).

4. *Open batches* older than the grace period (``batches.settle_open``): the ends of
   their jobs that a crash left uncounted are counted, and the steps after them taken.

5. *Copies owed*: a dead record whose DLQ copy was never confirmed sent
   (``transitions.COPY_DUE``: the worker crashed between the two, or the DLQ refused it),
   dead for longer than ``grace``, gets its copy, so the DLQ's depth, its alarm and
   ``dlq list`` see every dead job. Such a record keeps its index entry open until
   then, so the stale pass's read finds it. A worker that crashed after SQS took the
   copy (before deleting the original, or before confirming) left it in the DLQ
   already: when the first pass's look at the DLQ met a copy of that job sent since
   its death, the record is only confirmed, so the DLQ does not show the death twice.
   That look sees at most ``DLQ_LIMIT`` messages, and a short poll may miss some, so a
   copy it did not see is sent again: a duplicate at worst (a redrive discards the
   second), never a lost copy.

The same read keeps long payloads alive: an open job whose body item would expire
within a claim's extension margin (a job nobody claimed for weeks: a paused or
crash-looping fleet, a queue no worker serves) has its body extended, as a claim would
(``bodies.extend_bodies``), so a job's payload lives as long as the job does.

A re-send can duplicate a message that was merely slow; duplicates are harmless because
every claim is a conditional write.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

from ...core.lifecycle import DEAD, DELAYED, QUEUED, RUNNING, TERMINAL
from ...core.models import JobStatus, message_group
from ...core.reports import ReconcileReport
from ..wire import index_reads, sqs, transitions
from ..wire.index_keys import OPEN, index_pk, list_pk, list_sk
from ..wire.index_reads import CURRENT, FIRST_KEY, LAST_KEY, PREVIOUS
from ..wire.items import Stored, number, stored_from_item, text
from ..wire.layout import Layout
from ..wire.protocol import AwsError, ConditionFailed, Flow
from . import batches, waiting
from .bodies import claim_horizon, extend_bodies
from .dead_letters import Inspected, peek
from .indexes import job_id_of, records
from .resend import mark_resent
from .settle import send_dead_letter

# Which instant must be older than the grace period for a record to count as stale.
STALE_AFTER: tuple[tuple[JobStatus, str], ...] = (
    (QUEUED, "updated_at"),
    (DELAYED, "run_at"),
    (RUNNING, "lease_until"),
)
DLQ_LIMIT = 100  # DLQ messages inspected per queue per pass; the next pass sees the rest


def reconcile(
    layout: Layout, queues: Sequence[str], now: float, grace: float
) -> Flow[ReconcileReport]:
    dead = resent = copied = settled = 0
    for queue in queues:
        # Peek at the DLQ: ``dead_letters.inspect`` records abandoned jobs dead.
        letters = yield from peek(layout, queue, now, DLQ_LIMIT, wait=0)
        dead += sum(item.reconciled for item in letters)
        open_ = yield from _open_before(layout, queue, now - grace)
        settled += yield from waiting.settle_stranded(layout, open_, now - grace, now)
        resent += yield from _stale(layout, queue, open_, now, grace)
        in_dlq = _copies_in(letters)
        copied += yield from _owed_copies(layout, queue, open_, now - grace, in_dlq)
    settled += yield from batches.settle_open(layout, now - grace, now)
    return ReconcileReport(resent=resent, dead=dead, copied=copied, settled=settled)


def _copies_in(letters: Sequence[Inspected]) -> dict[str, float]:
    """The jobs the store's own copies in a DLQ name, each with its latest copy's send time."""
    sent: dict[str, float] = {}
    for item in letters:
        if item.job_id is not None and item.message.copied:
            sent[item.job_id] = max(item.message.sent_at, sent.get(item.job_id, 0.0))
    return sent


def _owed_copies(
    layout: Layout, queue: str, found: Sequence[Stored], cutoff: float, in_dlq: dict[str, float]
) -> Flow[int]:
    """Send the DLQ copies dead records still owe (dead before ``cutoff``); count them.

    A record whose copy is already in the DLQ (``in_dlq``: sent since its death, by SQS's
    clock, which may run ``clock_skew`` behind the worker's) owes none: its worker died
    after sending it. Nor does one of a queue that no longer has a DLQ. Either is only
    marked settled.
    """
    url = layout.info(queue).dead_letter_url
    sent = 0
    for stored, died in _owing(found, cutoff):
        copy_sent = in_dlq.get(stored.job.id, float("-inf")) >= died - layout.clock_skew
        if url is not None and not copy_sent:
            if not (yield from send_dead_letter(url, stored.job, stored.revive_key)):
                continue  # the next pass tries again
            sent += 1
        with contextlib.suppress(AwsError):  # a duplicate copy next pass, at worst
            yield transitions.copied(layout.indexed, (stored.job.id, queue), died)
    return sent


def _owing(found: Sequence[Stored], cutoff: float) -> list[tuple[Stored, float]]:
    """Dead records whose DLQ copy was not confirmed, dead since before ``cutoff``."""
    return [
        (stored, stored.copy_due)
        for stored in found
        if stored.job.status is DEAD and stored.copy_due is not None and stored.copy_due < cutoff
    ]


def _stale(
    layout: Layout, queue: str, found: Sequence[Stored], now: float, grace: float
) -> Flow[int]:
    cutoff = now - grace
    waiting = [stored for stored in found if stored.job.status not in TERMINAL]
    with contextlib.suppress(AwsError):  # the next pass (or the job's claim) extends them
        yield from extend_bodies(layout, waiting, claim_horizon(now))
    found = [stored for stored in waiting if is_stale(stored, cutoff)]
    if layout.previous_index:
        for status, instant in STALE_AFTER:
            for shard in range(layout.index_shards):
                partition = index_pk(status, shard)
                found += yield from _stale_in(layout.table, partition, queue, instant, cutoff)
    fresh: list[Stored] = []
    for stored in found:
        try:
            yield mark_resent(layout.table, stored, now)
        except ConditionFailed:
            continue  # it moved since the query: someone is handling it
        fresh.append(stored)
    url = layout.url(queue)
    for batch in sqs.chunks(fresh):
        entries = [
            (sqs.body(s.job.id, queue), sqs.send_delay(s.run_at, now), message_group(s.job))
            for s in batch
        ]
        yield sqs.send_batch(url, entries)
    return len(fresh)


def _open_before(layout: Layout, queue: str, cutoff: float) -> Flow[list[Stored]]:
    """The records of open ``by_queue`` entries created before the cutoff.

    Every instant a record is judged by (``updated_at``, ``run_at``, ``lease_until``)
    is at least its ``created_at`` by some host's clock, so entries created after
    ``cutoff`` (plus the clock skew hosts may have) cannot be stale and are not read.
    """
    before = list_sk(cutoff + layout.clock_skew, LAST_KEY)
    candidates: list[str] = []
    for shard in range(layout.index_shards):
        start = None
        while True:
            reply = yield index_reads.query_index(
                layout.table,
                CURRENT,
                list_pk(queue, shard),
                FIRST_KEY,
                before,
                limit=None,
                start=start,
                filter="#phase = :open",
                values={":open": text(OPEN)},
            )
            candidates += [job_id_of(item) for item in reply.get("Items", [])]
            start = reply.get("LastEvaluatedKey")
            if start is None:
                break
    found = yield from records(layout.table, candidates, payloads=False)
    return list(found.values())


def is_stale(stored: Stored, cutoff: float) -> bool:
    """Should have a message but was not claimed for longer than the grace period."""
    instants = {"updated_at": stored.updated_at, "run_at": stored.run_at}
    instants["lease_until"] = stored.lease_until if stored.lease_until is not None else cutoff
    resent = stored.resent_at
    for status, instant in STALE_AFTER:
        if stored.job.status is status:
            return instants[instant] < cutoff and (resent is None or resent < cutoff)
    return False


def _stale_in(
    table: str, partition: str, queue: str, instant: str, cutoff: float
) -> Flow[list[Stored]]:
    condition = (
        f"#{instant} < :cutoff AND (attribute_not_exists(#resent_at) OR #resent_at < :cutoff)"
    )
    found: list[Stored] = []
    start = None
    while True:
        reply = yield index_reads.query_index(
            table,
            PREVIOUS,
            partition,
            f"{queue}#",
            f"{queue}$",
            limit=100,
            start=start,
            filter=condition,
            values={":cutoff": number(cutoff)},
        )
        found += [stored_from_item(item) for item in reply.get("Items", [])]
        start = reply.get("LastEvaluatedKey")
        if start is None:
            return found
