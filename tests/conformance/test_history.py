"""``Job.history``: every attempt and operator action on a job, oldest first, bounded, on
every store.

Each entry is written by the write that makes it true (an outcome, a cancel, a retry,
a redrive, a claim that finds a lease over), so what one store notes the other notes
the same way: kind, attempt, worker, when its claim started it, outcome, the error's
line (short and safe) and who acted.
"""

from __future__ import annotations

from typing import Any

from sqsjobs import HistoryEntry, Job, JobStatus
from sqsjobs.core.history import HISTORY_KEPT, MAX_ENTRY_ERROR_CHARS
from sqsjobs.core.lifecycle import LEASE_EXPIRED_ERROR, STOPPING_ERROR
from sqsjobs.core.tracebacks import FailureText

from .harness import BOTH_FACES, Harness
from .support import claim_one, get, put, utc

WORKER_A = "ip-10-0-3-17:4711:3f2c"
WORKER_B = "ip-10-0-7-41:902:c0de"
OPERATOR = "cli:ana@ops-bastion"
TRACE = 'Traceback (most recent call last):\n  File "/srv/app/ledger.py", line 7, in post\nKeyError'


def story(job: Job) -> list[tuple[Any, ...]]:
    """Each entry's kind, attempt, outcome and worker: what an operator reads first."""
    return [(e.kind, e.attempt, e.outcome, e.worker) for e in job.history]


async def test_each_attempt_is_an_entry_with_its_worker_start_outcome_and_error(
    harness: Harness,
) -> None:
    await put(harness, "ledger.post", {"entry": "Ø-17"}, tenant="acme", max_attempts=3)
    first = await claim_one(harness, worker=WORKER_A)
    failed_at = harness.now()
    error = FailureText("KeyError: 'compte «Zoë»'", TRACE)
    assert await harness.store.fail(first.id, first.lease_token or "", error, failed_at, failed_at)
    second = await claim_one(harness, worker=WORKER_B)
    stopped_at = harness.now()
    assert await harness.store.release(
        first.id, second.lease_token or "", STOPPING_ERROR, stopped_at
    )
    third = await claim_one(harness, worker=WORKER_A)
    assert third.attempts == 2  # the released attempt was not counted
    completed_at = harness.now()
    assert await harness.store.complete(first.id, third.lease_token or "", completed_at, {"ok": 1})

    done = await get(harness, first.id)
    assert story(done) == [
        ("attempt", 1, "retry", WORKER_A),
        ("attempt", 2, "released", WORKER_B),
        ("attempt", 2, "completed", WORKER_A),
    ]
    assert done.history_count == 3
    failure, release, completion = done.history
    assert failure == HistoryEntry(
        at=utc(failed_at),
        kind="attempt",
        attempt=1,
        started_at=first.updated_at,  # what the claim wrote
        worker=WORKER_A,
        outcome="retry",
        error="KeyError: 'compte «Zoë»'",
        traceback=True,
    )
    assert (release.at, release.started_at) == (utc(stopped_at), second.updated_at)
    assert (release.error, release.traceback) == (STOPPING_ERROR, False)
    assert (completion.at, completion.started_at) == (utc(completed_at), third.updated_at)
    assert (completion.error, completion.by) == (None, None)
    # The release's note replaced the failure's as the last error; the history keeps both.
    assert (done.status, done.last_error) == (JobStatus.COMPLETED, STOPPING_ERROR)


async def test_a_deferred_start_and_a_claim_handed_back_are_no_attempts(harness: Harness) -> None:
    await put(harness, "thumbnail.render", {"photo": "été.jpg"}, tenant="globex")
    job = await claim_one(harness, worker=WORKER_A)
    later = harness.now() + 1
    deferred = "deferred: limit 'gpu' is full"
    assert await harness.store.release(
        job.id, job.lease_token or "", deferred, harness.now(), run_at=later
    )
    await harness.advance(1.2)
    again = await claim_one(harness, worker=WORKER_A)
    assert await harness.store.release(
        job.id, again.lease_token or "", "no free slot", harness.now()
    )
    record = await get(harness, job.id)
    assert (record.history, record.history_count, record.attempts) == ([], 0, 0)


@BOTH_FACES
async def test_a_dead_job_run_again_by_an_operator_says_who_and_keeps_its_failures(
    harness: Harness,
) -> None:
    await put(harness, "invoice.send", {"invoice": "INV-2041"}, tenant="acme", max_attempts=2)
    for worker, text in ((WORKER_A, "SMTPDataError: 451 greylisted"), (WORKER_B, "TimeoutError")):
        run = await claim_one(harness, worker=worker)
        assert await harness.store.fail(
            run.id, run.lease_token or "", text, harness.now(), harness.now()
        )
    dead = await get(harness, run.id)
    assert dead.status is JobStatus.DEAD
    store: Any = harness.store
    retried_at = harness.now()
    assert await store.retry(run.id, retried_at, by=OPERATOR)
    back = await get(harness, run.id)
    assert (back.status, back.attempts) == (JobStatus.QUEUED, 0)
    assert back.history[-1] == HistoryEntry(
        at=utc(retried_at),
        kind="retry",
        attempt=None,
        started_at=None,
        worker=None,
        outcome="queued",
        by=OPERATOR,
    )
    again = await claim_one(harness, worker=WORKER_A)
    assert await harness.store.complete(run.id, again.lease_token or "", harness.now(), None)
    done = await get(harness, run.id)
    assert story(done) == [
        ("attempt", 1, "retry", WORKER_A),
        ("attempt", 2, "dead", WORKER_B),
        ("retry", None, "queued", None),
        ("attempt", 1, "completed", WORKER_A),
    ]
    # The first error is kept, not just the last.
    assert [e.error for e in done.history] == [
        "SMTPDataError: 451 greylisted",
        "TimeoutError",
        None,
        None,
    ]


@BOTH_FACES
async def test_a_redrive_and_a_cancel_are_noted_with_who_asked(harness: Harness) -> None:
    store: Any = harness.store
    await put(harness, "labels.print", {"order": "Ø-1729"}, max_attempts=1)
    run = await claim_one(harness, worker=WORKER_A)
    assert await store.fail(
        run.id, run.lease_token or "", "LabelPrinterOffline: « Zürich-3 »", None, harness.now()
    )
    report = await store.redrive("default", by="dashboard")
    assert report.redriven == 1
    redriven = await get(harness, run.id)
    assert story(redriven)[-1] == ("redrive", None, "queued", None)
    assert redriven.history[-1].by == "dashboard"

    assert await store.cancel(run.id, harness.now(), by=OPERATOR)
    cancelled = await get(harness, run.id)
    assert story(cancelled) == [
        ("attempt", 1, "dead", WORKER_A),
        ("redrive", None, "queued", None),
        ("cancel", None, "cancelled", None),
    ]
    assert (cancelled.history[-1].by, cancelled.history_count) == (OPERATOR, 3)


async def test_a_cancel_of_a_running_job_names_the_attempt_it_cut_short(harness: Harness) -> None:
    await put(harness, "report.build", {"month": "2026-11"}, tenant="initech")
    run = await claim_one(harness, worker=WORKER_B)
    assert await harness.store.cancel(run.id, harness.now())
    cancelled = await get(harness, run.id)
    assert story(cancelled) == [("cancel", 1, "cancelled", WORKER_B)]
    assert cancelled.history[0].by is None  # a store call that did not say who
    # The run's outcome comes too late: the cancel is the story's end.
    assert not await harness.store.complete(run.id, run.lease_token or "", harness.now(), None)
    assert (await get(harness, run.id)).history_count == 1


async def test_a_lease_that_ran_out_is_noted_by_the_claim_that_finds_it(harness: Harness) -> None:
    await put(harness, "video.encode", {"clip": "café.mov"}, lease=1, max_attempts=2)
    await claim_one(harness, worker=WORKER_A)
    await harness.advance(1.5)
    found_at = harness.now()
    [second] = await harness.store.claim("default", WORKER_B, found_at)
    assert second.attempts == 2
    assert story(second) == [("expired", 1, "retry", WORKER_A)]  # the claim returns it too
    assert second.history[0].at == utc(found_at)
    assert (second.history[0].started_at, second.history[0].error) == (None, None)

    await harness.advance(1.5)
    assert await harness.store.claim("default", WORKER_A, harness.now()) == []
    dead = await get(harness, second.id)
    assert dead.status is JobStatus.DEAD
    assert story(dead) == [("expired", 1, "retry", WORKER_A), ("expired", 2, "dead", WORKER_B)]
    assert dead.history[-1].error == LEASE_EXPIRED_ERROR


async def test_the_history_keeps_the_last_ten_entries_and_counts_every_one(
    harness: Harness,
) -> None:
    await put(harness, "sync.inventory", {"shop": "Åre"}, tenant="acme", max_attempts=20)
    errors = []
    for n in range(12):
        run = await claim_one(harness, worker=f"worker-{n}")
        now = harness.now()
        if n % 2:
            assert await harness.store.release(run.id, run.lease_token or "", STOPPING_ERROR, now)
            errors.append(STOPPING_ERROR)
        else:
            error = f"ConnectionError: entrepôt {n} injoignable"
            assert await harness.store.fail(run.id, run.lease_token or "", error, now, now)
            errors.append(error)
    run = await claim_one(harness, worker="worker-last")
    assert await harness.store.complete(run.id, run.lease_token or "", harness.now(), None)

    done = await get(harness, run.id)
    assert done.history_count == 13
    assert len(done.history) == HISTORY_KEPT
    assert [e.worker for e in done.history] == [f"worker-{n}" for n in range(3, 12)] + [
        "worker-last"
    ]
    assert [e.error for e in done.history[:-1]] == errors[3:]
    assert [e.attempt for e in done.history] == [3, 3, 4, 4, 5, 5, 6, 6, 7, 7]
    assert done.history == sorted(done.history, key=lambda entry: entry.at)


async def test_an_entry_keeps_its_error_on_one_line_without_secrets_and_short(
    harness: Harness,
) -> None:
    await put(harness, "webhook.deliver", {"to": "https://hooks.example/ü"}, max_attempts=2)
    run = await claim_one(harness, worker=WORKER_A)
    error = (
        "HTTPError: 502 from https://svc:s3cr3t@hooks.example/ü?token=abc\n"
        + "\x1b[31mnaïve\u202e"
        + "ß" * 400
    )
    assert await harness.store.fail(
        run.id, run.lease_token or "", error, harness.now(), harness.now()
    )
    [entry] = (await get(harness, run.id)).history
    assert entry.error is not None and len(entry.error) == MAX_ENTRY_ERROR_CHARS
    assert entry.error.startswith("HTTPError: 502 from https://***@hooks.example/ü?token=***\\n")
    assert "\\x1b[31mnaïve\\u202e" in entry.error and entry.error.endswith("ß…")
    assert "\n" not in entry.error and "s3cr3t" not in entry.error
