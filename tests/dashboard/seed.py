"""Realistic jobs for the dashboard's tests and screenshots, written through the store's SPI.

Several tenants, unicode in payloads, results and errors, one job of each outcome, and
records whose name, error and payload carry markup that a page must show as text.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from sqsjobs import EnqueueRequest, JobQueue, JobStore
from sqsjobs.core.tracebacks import FailureText
from sqsjobs.producer.enqueue import prepare

HOSTILE_NAME = '"><img src=x onerror=alert(1)>'
HOSTILE_ERROR = 'ValueError: <script>alert("error")</script> for "><img onerror=alert(2)>'
HOSTILE_PAYLOAD = {"note": "<script>alert('payload')</script>", "to": '"><b>bold</b>'}
WORKER = "worker-7f3a@ip-10-0-3-17"
# Idempotency keys are often built from what the payload holds: hidden with payloads.
RECEIPT_KEY = "receipt:joerg@acme.example:2026-10"
CHARGE_KEY = "charge:zoe-angstrom:inv-20261107"
DECLINED = "PaymentDeclined: card ending 4242 declined (東京 gateway said: insufficient funds)"
# The dead job's traceback as a worker keeps it: a cause whose message runs over two
# lines (a library's), then the handler's own error; frames are code, messages are data.
CHARGE_FRAME = '  File "/srv/app/billing/charge.py", line 88, in charge_card'
DECLINED_TRACE = "\n".join(
    [
        "Traceback (most recent call last):",
        CHARGE_FRAME,
        "    receipt = gateway.capture(payload.card, payload.total)",
        "    ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^",
        "billing.gateway.GatewayError: declined for jörg@acme.example",
        "  detail: amount 41.97 over the limit of Zoë Ångström's card",
        "",
        "The above exception was the direct cause of the following exception:",
        "",
        "Traceback (most recent call last):",
        '  File "/srv/app/billing/charge.py", line 91, in charge_card',
        "    raise PaymentDeclined(str(error)) from error",
        DECLINED,
    ]
)


@dataclass(frozen=True)
class Seeded:
    """The ids a test looks up again."""

    completed: str
    dead: str
    hostile: str
    waiting: list[str]
    cancelled: str


async def _claim(store: JobStore, queue: str, job_id: str) -> str:
    """Claim until ``job_id`` comes out (SQS may hand others first); its lease token."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        for claimed in await store.claim(queue, WORKER, time.time(), limit=10, wait=0.5):
            if claimed.id == job_id:
                return claimed.lease_token or ""
            await store.release(claimed.id, claimed.lease_token or "", "not now", time.time())
    raise AssertionError(f"job {job_id} was never claimed")


async def seed(store: JobStore) -> Seeded:
    """Enqueue and settle the mix of jobs on ``store`` (queues ``default`` and ``other``)."""
    queue = JobQueue(store, default_max_attempts=3)
    shop = queue.for_tenant("acme-shop")
    receipt = {"to": "jörg@acme.example", "total": 41.97}
    done = (await shop.enqueue("email.receipt", receipt, idempotency_key=RECEIPT_KEY)).job
    token = await _claim(store, "default", done.id)
    await store.complete(done.id, token, time.time(), {"message_id": "msg-83c1", "ok": True})
    doomed = (
        await queue.for_tenant("globex").enqueue(
            "billing.charge",
            {"customer": "Zoë Ångström", "amount_cents": 12_999},
            queue="other",
            idempotency_key=CHARGE_KEY,
        )
    ).job
    token = await _claim(store, "other", doomed.id)
    await store.fail(doomed.id, token, FailureText(DECLINED, DECLINED_TRACE), None, time.time())
    request = EnqueueRequest(name="import.csv", payload=HOSTILE_PAYLOAD, tenant="initech")
    hostile = prepare(queue.config, request, time.time()).job
    hostile = hostile.model_copy(update={"name": HOSTILE_NAME})
    await store.put(hostile, None)
    token = await _claim(store, "default", hostile.id)
    await store.fail(hostile.id, token, HOSTILE_ERROR, None, time.time())
    waiting = [
        (await queue.for_tenant(tenant).enqueue("report.build", {"month": month})).job.id
        for tenant, month in (
            ("acme-shop", "2026-10"),
            ("initech", "2026-11"),
            ("globex", "2026-11"),
        )
    ]
    later = (await queue.enqueue("cleanup.sessions", {"older_than_days": 30}, delay=600)).job
    assert await store.cancel(later.id, time.time())
    return Seeded(done.id, doomed.id, hostile.id, waiting, later.id)
