"""The demo's application code: a small shop's job handlers, written as a user would.

They show the handler conventions: a pydantic payload model (``email.send``,
``invoice.charge``), a blocking handler that runs in a worker thread (``image.resize``),
a handler that reads its attempt number from the context (``report.build``) and one that
refuses bad data with ``JobFatalError`` so it dead-letters instead of retrying.

The sleeps stand in for the network calls a real handler would make; they are short so
the demo finishes in seconds.
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from pydantic import BaseModel

from .. import JobContext, JobFatalError, JobRegistry

registry = JobRegistry()


class Email(BaseModel):
    to: str
    template: str


class Charge(BaseModel):
    invoice: str
    cents: int


@registry.handler("email.send")
async def send_email(payload: Email, ctx: JobContext) -> dict[str, str]:
    """Render and hand the message to the mail provider."""
    await asyncio.sleep(0.3)
    ctx.log.info("Sent %r email", payload.template)
    return {"to": payload.to, "provider_id": f"msg-{ctx.job.id[:8]}"}


@registry.handler("image.resize")
def resize_image(payload: dict[str, Any]) -> dict[str, Any]:
    """Resize an uploaded image; CPU-bound and blocking, so it runs in a worker thread."""
    time.sleep(0.2)
    return {"key": f"{payload['width']}w/{payload['key']}", "width": payload["width"]}


@registry.handler("report.build")
async def build_report(ctx: JobContext) -> dict[str, Any]:
    """Query the warehouse and store the report.

    The warehouse is cold when the demo starts: the first two attempts time out and the
    worker retries them with backoff; the third succeeds.
    """
    if ctx.attempt <= 2:
        raise ConnectionError("warehouse query timed out")
    await asyncio.sleep(0.3)
    return {"rows": 1284, "report": ctx.job.payload}


@registry.handler("invoice.charge")
async def charge_invoice(payload: Charge) -> dict[str, str]:
    """Charge the invoice; a negative amount is bad data that no retry can fix."""
    if payload.cents <= 0:
        raise JobFatalError(
            f"invoice {payload.invoice} has amount {payload.cents} cents; refusing to charge"
        )
    await asyncio.sleep(0.2)
    return {"charge": f"ch_{payload.invoice}"}
