"""The producer's writes: ``put`` and ``put_many``, each written once for both drivers.

A flow is a generator that yields ``Call``s and receives replies (see ``wire.protocol``);
it touches no client and no clock, so ``drive`` runs it on boto3 for ``SyncJobQueue`` and
``adrive`` on aiobotocore for ``JobQueue``, and tests run it on a scripted fake.

Put writes the record, then sends its message::

    [PutItem body] ──► PutItem (conditional) ──► SendMessage
            │ crash here: the record is durable and queued with no message;
            │ ``reconcile`` sends one once the grace period has passed.
            └─ refused: ALL_OLD is the live record holding the key → duplicate or conflict

A payload too long for the record goes first to a body item of its own (``bodies``).
"""

from __future__ import annotations

import contextlib
import uuid
from collections.abc import Iterator, Sequence

from ...core.errors import JobBatchError, JobConfigError, JobIdempotencyConflictError
from ...core.lifecycle import WAITING, initial_status
from ...core.models import Job, message_group
from ...core.requests import EnqueueResult
from ...core.times import utc
from ..wire import dynamo, sqs
from ..wire.debounce import slot_pk
from ..wire.items import (
    AWAITING,
    DEBOUNCE_SLOT,
    WAITS,
    Attributes,
    Stored,
    keyed_id,
    readable,
    text,
)
from ..wire.layout import Layout
from ..wire.protocol import AwsError, ConditionFailed, Flow, Parallel, public_error
from . import debounce, waiting
from .bodies import new_items, put_body
from .new_messages import body_of, deliver_all, send_new
from .resend import mark_resent, message_overdue

PutEntry = tuple[Job, str | None]  # a job to put, and its idempotency fingerprint
PUT_ID = "put_id"


def placed(job: Job) -> Job:
    """The job as written: a keyed job takes the id its ``(queue, tenant, key)`` determines."""
    if job.idempotency_key is None:
        return job
    return job.model_copy(update={"id": keyed_id(job.queue, job.tenant, job.idempotency_key)})


def put(layout: Layout, job: Job, fingerprint: str | None, now: float) -> Flow[EnqueueResult]:
    """Write the record, then send its message; a job with parents waits without one
    (``waiting``), linked to each parent it waits for."""
    if job.debounce_key is not None:
        return (yield from _put_debounced(layout, job, now))
    refuse_unsendable(layout.url(job.queue), job, now)
    awaits: list[str] = []
    if job.after:
        awaits = waiting.awaited((yield from waiting.read_parents(layout, job, now)))
        status = WAITING if awaits else initial_status(job.run_at.timestamp(), now)
        job = job.model_copy(update={"status": status})
    result = yield from _write(layout, placed(job), fingerprint, now, awaits)
    if result.duplicate:
        return result
    if awaits:
        yield from waiting.link(layout, result.job, awaits, now)
        return EnqueueResult((yield from _reread(layout, result.job)), duplicate=False)
    yield from send_new(layout, result.job, now)
    return result


def _put_debounced(layout: Layout, job: Job, now: float) -> Flow[EnqueueResult]:
    """Join ``job``'s burst, or start one with ``job`` as its job."""
    if layout.record_format < WAITS:
        raise JobConfigError(
            "invalid_option",
            f"debounce_key writes records that 0.2 releases cannot read, and this store "
            f"writes record format {layout.record_format}: once no 0.2 release reads the "
            f"table, write format {WAITS}, the default",
        )
    refuse_unsendable(layout.url(job.queue), job, now)
    assert job.debounce_key is not None
    pk = slot_pk(job.queue, job.tenant, job.debounce_key)
    slot = yield from debounce.join(layout, pk, job, now)
    holder = slot["job_id"]["S"]
    if holder != job.id:  # a burst under way: its job, with this enqueue's payload and time
        created = utc(float(slot["created_at"]["N"]))
        held = job.model_copy(update={"id": holder, "created_at": created})
        return EnqueueResult(held, duplicate=True)
    record, body = new_items(layout, job, None)
    record[DEBOUNCE_SLOT] = text(pk)
    if body is not None:
        yield put_body(layout.table, body)
    yield from put_record(layout.table, record, now)
    yield from send_new(layout, job, now)
    return EnqueueResult(job, duplicate=False)


def _reread(layout: Layout, job: Job) -> Flow[Job]:
    """The job as its links left it: still waiting, or settled by a parent that ended
    while it was written (``waiting.link``)."""
    reply = yield dynamo.get(layout.table, job.id)
    item = reply.get("Item")
    return (
        job
        if item is None
        else readable(item, "GetItem").job.model_copy(update={"payload": job.payload})
    )


def refuse_unsendable(url: str, job: Job, now: float) -> None:
    """Refuse, before anything is written, a job that ``url``'s queue cannot deliver on time.

    A FIFO queue takes no per-message delay: a delayed job's message goes at once and
    the claim hides it until due, which one hide does for up to SQS's 12-hour visibility
    limit. Every further 12 hours would cost another receive, counted towards the redrive
    policy's ``maxReceiveCount``, and once that budget ran low the message would have to
    be re-sent fresh, behind its group's later jobs: so a longer delay is refused.
    """
    ahead = job.run_at.timestamp() - now
    if sqs.is_fifo(url) and ahead > sqs.MAX_VISIBILITY:
        raise JobConfigError(
            "invalid_option",
            f"Invalid delay {ahead:.0f} s for FIFO queue {job.queue!r}: a FIFO queue holds "
            f"a delayed job's message hidden for at most {sqs.MAX_VISIBILITY} s (12 h); "
            "use a standard queue for longer delays",
        )


def _write(
    layout: Layout, job: Job, fingerprint: str | None, now: float, awaits: Sequence[str] = ()
) -> Flow[EnqueueResult]:
    """Write a new record; for a key already held, the holder (re-sending a lost message).
    ``awaits``: the parents a waiting job waits for (``flows.waiting``)."""
    record, body = new_items(layout, job, fingerprint)
    if awaits:
        record[AWAITING] = {"SS": list(awaits)}
    if body is not None:
        yield put_body(layout.table, body)
    try:
        yield from put_record(layout.table, record, now)
    except ConditionFailed as taken:
        if job.idempotency_key is None or taken.item is None:
            raise
        holder = readable(taken.item, "PutItem")
        if holder.fingerprint != fingerprint:
            raise JobIdempotencyConflictError(job.idempotency_key, holder.job.id) from None
        yield from resend_if_lost(layout, holder, now)
        # The same fingerprint: the holder's payload is this one (its record may keep it
        # in its body item).
        held = holder.job.model_copy(update={"payload": job.payload})
        return EnqueueResult(held, duplicate=True)
    return EnqueueResult(job, duplicate=False)


def resend_if_lost(layout: Layout, holder: Stored, now: float) -> Flow[None]:
    """A producer's retry heals a send that failed after its record was written.

    Producers retry with the same key when an enqueue failed; the retry finds the record
    and would otherwise leave it waiting for the reconciler (or forever, where none runs).
    A record still waiting, due, and without a message sent for ``resend_after`` seconds
    gets one, once: the conditional ``resent_at`` write lets one of several concurrent
    duplicates (or the reconciler) send it. A message that was only slow becomes a
    duplicate, which every claim's conditional write makes harmless.
    """
    if not message_overdue(holder, now, layout.resend_after):
        return
    try:
        yield mark_resent(layout.table, holder, now)
    except ConditionFailed:
        return  # someone else re-sent it, or the record moved on
    url, delay = layout.url(holder.job.queue), sqs.send_delay(holder.run_at, now)
    yield sqs.send(url, body_of(holder.job), delay, message_group(holder.job))


def put_record(table: str, item: Attributes, now: float) -> Flow[None]:
    """The conditional ``PutItem`` of a new record, safe to retry.

    botocore retries a request whose response was lost (a dropped connection, a 500 after
    the write); when the lost one was applied, the retry is refused by the item it wrote
    itself. That refusal is this write's success, not a conflict or a duplicate: the item
    carries a random ``put_id`` per put (the same in botocore's retries of it), so finding
    ours is finding our own write. Neither the key nor ``created_at`` tells it apart:
    ``enqueue_many`` writes repeated keys with one ``created_at``.
    """
    item = _with_put_id(item)
    try:
        yield dynamo.put_new(table, item, now)
    except ConditionFailed as taken:
        if not _refused_by_itself(taken, item):
            raise


def put_records(table: str, items: Sequence[Attributes], now: float) -> Flow[None]:
    """``put_record`` for several new records at once (``Parallel``): the first error is
    raised once all have answered, since the others may have been written meanwhile."""
    marked = [_with_put_id(item) for item in items]
    replies = yield Parallel(tuple(dynamo.put_new(table, item, now) for item in marked))
    for item, reply in zip(marked, replies, strict=True):
        if isinstance(reply, ConditionFailed) and _refused_by_itself(reply, item):
            continue  # our own write: botocore retried it after its response was lost
        if isinstance(reply, AwsError):
            raise reply


def _with_put_id(item: Attributes) -> Attributes:
    return {**item, PUT_ID: text(uuid.uuid4().hex)}


def _refused_by_itself(refused: ConditionFailed, item: Attributes) -> bool:
    return refused.item is not None and refused.item.get(PUT_ID) == item[PUT_ID]


def put_many(layout: Layout, items: Sequence[PutEntry], now: float) -> Flow[list[EnqueueResult]]:
    """Write ten at a time (records first, then one message batch per queue).

    Results come in request order. The first failure stops the batch with
    ``JobBatchError`` holding the results of the requests before it. Jobs without keys
    are written together (``Parallel``: concurrently on the asyncio face, one after
    another on the blocking one), so requests after a failed one may be written too:
    their messages are sent with those before it (if that send fails too, the records
    are durable and the reconciler sends them), and the error's message counts them.
    """
    for job, _ in items:  # an unknown queue or an unsendable delay: before anything is written
        refuse_unsendable(layout.url(job.queue), job, now)
    if any(job.after or job.debounce_key for job, _ in items):
        return (yield from _one_by_one(layout, items, now))
    results: list[EnqueueResult] = []
    for group in sqs.chunks([(placed(job), fp) for job, fp in items]):
        written = yield from _write_group(layout, group, now)
        if written.error is not None:
            yield from _deliver_quietly(layout, written.results + written.beyond, now)
            error = _batch_error(results + written.results, written.error, len(written.beyond))
            raise error from _cause(written.error)
        results += written.results
        try:
            yield from _deliver(layout, written.results, now)
        except AwsError as error:
            raise _batch_error(results, error) from _cause(error)
    return results


def _one_by_one(layout: Layout, items: Sequence[PutEntry], now: float) -> Flow[list[EnqueueResult]]:
    """A batch with jobs that wait for others: each put in turn (``put``), so a job may
    name a parent written earlier in the same batch."""
    results: list[EnqueueResult] = []
    for job, fingerprint in items:
        try:
            results.append((yield from put(layout, job, fingerprint, now)))
        except (JobConfigError, JobIdempotencyConflictError, AwsError) as error:
            raise _batch_error(results, error) from _cause(error)
    return results


class _Written:
    """What one group's writes did, in request order.

    ``results`` are the requests written before the first failure (``error``);
    ``beyond`` are requests after it that were written anyway: the puts of a run go out
    together, so a failed one does not stop the others. They are real jobs; the batch
    sends their messages but does not report them, as it reports nothing past a failure.
    """

    __slots__ = ("beyond", "error", "results")

    def __init__(self) -> None:
        self.results: list[EnqueueResult] = []
        self.beyond: list[EnqueueResult] = []
        self.error: JobIdempotencyConflictError | AwsError | None = None


def _write_group(layout: Layout, group: Sequence[PutEntry], now: float) -> Flow[_Written]:
    written = _Written()
    for run in _runs(group):
        try:
            yield from _write_run(layout, run, now, written)
        except (JobIdempotencyConflictError, AwsError) as error:
            written.error = error
        if written.error is not None:
            break
    return written


def _runs(group: Sequence[PutEntry]) -> Iterator[Sequence[PutEntry]]:
    """Consecutive jobs without keys go out together; a keyed job goes alone.

    A keyed job may meet a key written earlier in the same batch, so it waits for every
    write before it; jobs without keys have fresh random ids and cannot meet anything.
    """
    run: list[PutEntry] = []
    for job, fingerprint in group:
        if job.idempotency_key is None:
            run.append((job, fingerprint))
            continue
        if run:
            yield run
            run = []
        yield [(job, fingerprint)]
    if run:
        yield run


def _write_run(
    layout: Layout, run: Sequence[PutEntry], now: float, written: _Written
) -> Flow[None]:
    """A keyed job's ``put``; for jobs without keys, their ``PutItem``s sent together.

    Each is the conditional ``PutItem`` of ``put_record`` (one item write per job, as a
    batch write would bill), so nothing is ever overwritten, and producers need no
    permission that could delete a record (``BatchWriteItem`` can).
    """
    job, fingerprint = run[0]
    if job.idempotency_key is not None:
        written.results.append((yield from _write(layout, job, fingerprint, now)))
        return
    pairs = [new_items(layout, job, fp) for job, fp in run]
    bodies = tuple(put_body(layout.table, body) for _, body in pairs if body is not None)
    if bodies:
        for reply in (yield Parallel(bodies)):
            if isinstance(reply, AwsError):
                raise reply  # nothing of this run is written but bodies: their TTL ends them
    items = [_with_put_id(record) for record, _ in pairs]
    replies = yield Parallel(tuple(dynamo.put_new(layout.table, item, now) for item in items))
    for (job, _), item, reply in zip(run, items, replies, strict=True):
        if isinstance(reply, ConditionFailed) and _refused_by_itself(reply, item):
            reply = {}  # our own write: botocore retried it after its response was lost
        if not isinstance(reply, AwsError):
            result = EnqueueResult(job, duplicate=False)
            (written.results if written.error is None else written.beyond).append(result)
        elif written.error is None:
            written.error = reply


def _deliver(layout: Layout, written: Sequence[EnqueueResult], now: float) -> Flow[None]:
    """Send the messages of newly written jobs, one batch per queue and ten at a time."""
    yield from deliver_all(layout, [result.job for result in written if not result.duplicate], now)


def _deliver_quietly(layout: Layout, written: Sequence[EnqueueResult], now: float) -> Flow[None]:
    with contextlib.suppress(AwsError):  # the records are durable: the reconciler sends them
        yield from _deliver(layout, written, now)


def _batch_error(results: list[EnqueueResult], error: Exception, beyond: int = 0) -> JobBatchError:
    text = f"Batch stopped at request {len(results)}: {error}"
    if beyond:
        text += f" ({beyond} later request(s) sent with it were written and will run)"
    return JobBatchError(results, text)


def _cause(error: Exception) -> BaseException:
    return public_error(error) if isinstance(error, AwsError) else error
