"""``enqueue_in_transaction``: the application's own writes and the jobs' records in one
``TransactWriteItems``, then the jobs' messages.

    [PutItem bodies] ──► TransactWriteItems (the application's entries + one conditional
    Put per job) ──► SendMessageBatch
            │ crash or failed send here: the records are durable and queued with no
            │ message; the reconciler sends one after its grace period, and a retry
            │ with the same idempotency keys finds them and sends one (``put``).
            └─ cancelled: nothing of it is written; ``JobTransactionError`` has AWS's
               reasons, one per entry

A keyed job whose key is held is no reason to cancel the application's writes: as with
``enqueue``, the holder is the job. The transaction is sent again without that job's
entry, and the result says ``duplicate=True``; a holder with another payload is
``JobIdempotencyConflictError``, and nothing is written. A payload too long for its
record goes to a body item before the transaction (``bodies``); a cancelled
transaction leaves such bodies to their TTL, pointed at by nothing.

The transaction carries a ``ClientRequestToken``, so botocore's retry of one whose
answer was lost is recognised by DynamoDB and not applied twice.
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Mapping, Sequence
from typing import Any

from ...core.errors import (
    JobConfigError,
    JobIdempotencyConflictError,
    JobTransactionError,
    failed,
)
from ...core.requests import EnqueueResult
from ..wire import dynamo
from ..wire.items import Attributes, readable
from ..wire.layout import Layout
from ..wire.protocol import AwsError, Call, Flow, Parallel
from .bodies import new_items, put_body
from .new_messages import deliver_all
from .put import PUT_ID, PutEntry, placed, refuse_unsendable, resend_if_lost

# What one entry of ``TransactWriteItems`` may be, in the low-level client's format.
OPERATIONS = frozenset({"Put", "Update", "Delete", "ConditionCheck"})
MAX_ENTRIES = 100  # DynamoDB's limit on one transaction's entries
CANCELLED = "TransactionCanceledException"


def put_in_transaction(
    layout: Layout, entries: Sequence[PutEntry], items: Sequence[Mapping[str, Any]], now: float
) -> Flow[list[EnqueueResult]]:
    """Commit ``items`` and the jobs' records together, then send the jobs' messages."""
    checked = _checked(items, len(entries))
    jobs = _unique(layout, entries, now)
    records: list[tuple[int, Attributes]] = []
    bodies: list[Call] = []
    for index, (job, fingerprint) in enumerate(jobs):
        record, body = new_items(layout, job, fingerprint)
        records.append((index, {**record, PUT_ID: {"S": uuid.uuid4().hex}}))
        bodies += [] if body is None else [put_body(layout.table, body)]
    for reply in (yield Parallel(tuple(bodies))) if bodies else ():
        if isinstance(reply, AwsError):
            raise reply  # nothing of the transaction is written: only bodies, left to TTL
    held: dict[int, EnqueueResult] = {}
    while True:
        writing = [(i, record) for i, record in records if i not in held]
        transaction = [*checked, *(_put(layout.table, record, now) for _, record in writing)]
        if not transaction:
            break  # every job was already written, under its key, and no item is left
        try:
            yield dynamo.transact_write(transaction, uuid.uuid4().hex)
            break
        except AwsError as error:
            reasons = _reasons(error)
            if reasons is None:
                raise
            cancelled = JobTransactionError(reasons, len(checked))
            if any(failed(reason) for reason in cancelled.item_reasons):
                raise cancelled from error.cause
            taken = yield from _held_keys(layout, jobs, writing, reasons[len(checked) :], now)
            if not taken:
                raise cancelled from error.cause
            held |= taken
    results = [
        held.get(i) or EnqueueResult(job, duplicate=False) for i, (job, _) in enumerate(jobs)
    ]
    written = [result.job for result in results if not result.duplicate]
    with contextlib.suppress(AwsError):  # the records are durable: the reconciler sends them
        yield from deliver_all(layout, written, now)
    return _per_request(entries, results)


def _checked(items: Sequence[Mapping[str, Any]], jobs: int) -> list[Mapping[str, Any]]:
    """The application's entries as given, each one operation, all refused before any
    write if one is not."""
    if isinstance(items, (str, bytes, Mapping)) or not isinstance(items, Sequence):
        raise JobConfigError(
            "invalid_option",
            f"Invalid items {type(items).__name__}: a list of TransactWriteItems entries",
        )
    for index, item in enumerate(items):
        keys = set(item) if isinstance(item, Mapping) else set()
        if len(keys) != 1 or not keys <= OPERATIONS:
            raise JobConfigError(
                "invalid_option",
                f"Invalid transaction item {index}: an entry has exactly one of "
                f"{', '.join(sorted(OPERATIONS))} in the DynamoDB client's format "
                f"(got {sorted(keys) if keys else type(item).__name__})",
            )
    if not jobs:
        raise JobConfigError("invalid_option", "enqueue_in_transaction needs one request at least")
    if len(items) + jobs > MAX_ENTRIES:
        raise JobConfigError(
            "invalid_option",
            f"Too many entries for one transaction: {len(items)} items and {jobs} jobs; "
            f"DynamoDB takes at most {MAX_ENTRIES}, a job's record being one",
        )
    return list(items)


def _unique(layout: Layout, entries: Sequence[PutEntry], now: float) -> list[PutEntry]:
    """The jobs to write: a keyed job named twice is written once (one transaction may not
    touch an item twice), and a second payload for one key is refused."""
    seen: dict[str, PutEntry] = {}
    for job, fingerprint in entries:
        if job.after or job.debounce_key:
            raise JobConfigError(
                "invalid_option",
                f"Job {job.name!r} waits for parents (after) or has a debounce key: "
                "enqueue_in_transaction writes neither links nor debounce slots; enqueue "
                "such a job after the commit",
            )
        refuse_unsendable(layout.url(job.queue), job, now)
        job = placed(job)
        first = seen.setdefault(job.id, (job, fingerprint))
        if first[1] != fingerprint and job.idempotency_key is not None:
            raise JobIdempotencyConflictError(job.idempotency_key, job.id)
    return list(seen.values())


def _put(table: str, record: Attributes, now: float) -> dict[str, Any]:
    """A job's record as a transaction entry: ``put_new``'s conditional put."""
    params = dict(dynamo.put_new(table, record, now).params)
    return {"Put": params}


def _reasons(error: AwsError) -> list[dict[str, Any]] | None:
    """AWS's cancellation reasons, one per entry; None for any other failure."""
    if error.code != CANCELLED:
        return None
    response = getattr(error.cause, "response", {})
    reasons = response.get("CancellationReasons")
    return [dict(reason) for reason in reasons] if isinstance(reasons, list) else None


def _held_keys(
    layout: Layout,
    jobs: Sequence[PutEntry],
    writing: Sequence[tuple[int, Attributes]],
    reasons: Sequence[Mapping[str, Any]],
    now: float,
) -> Flow[dict[int, EnqueueResult] | None]:
    """The keyed jobs whose put alone cancelled the transaction (their key is held by a
    live record): each as the holder, a duplicate. None if anything else cancelled it."""
    taken: dict[int, EnqueueResult] = {}
    for (index, _), reason in zip(writing, reasons, strict=False):
        if not failed(reason):
            continue
        code = reason.get("Code")
        job, fingerprint = jobs[index]
        item = reason.get("Item")
        if code != "ConditionalCheckFailed" or job.idempotency_key is None or not item:
            return None
        holder = readable(item, "TransactWriteItems")
        if holder.fingerprint != fingerprint:
            raise JobIdempotencyConflictError(job.idempotency_key, holder.job.id)
        yield from resend_if_lost(layout, holder, now)
        held = holder.job.model_copy(update={"payload": job.payload})
        taken[index] = EnqueueResult(held, duplicate=True)
    return taken


def _per_request(
    entries: Sequence[PutEntry], results: Sequence[EnqueueResult]
) -> list[EnqueueResult]:
    """One result per request, in order: a request naming a key that an earlier request
    of the same call named is a duplicate of that one's job, as in ``enqueue_many``."""
    by_id = {result.job.id: result for result in results}
    answered: list[EnqueueResult] = []
    seen: set[str] = set()
    for job, _ in entries:
        result = by_id[placed(job).id]
        if result.job.id in seen:
            result = EnqueueResult(result.job, duplicate=True)
        seen.add(result.job.id)
        answered.append(result)
    return answered
