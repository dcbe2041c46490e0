"""A worker's cap on the runs of one tenant: ``JobWorker(..., tenant_concurrency=N)``.

Claims cannot pick a tenant (SQS hands out whatever comes next), so a burst of one
tenant's jobs would otherwise fill every slot of a worker while another tenant's job
waits behind them. With a cap, a claimed job whose tenant already has ``N`` runs here
does not start: the run defers it (``run``), back to its queue delayed by about a
second, its attempt not counted, and the slot goes to the next claim. Jobs with no
tenant count as one tenant of their own. The cap is per worker process; a fleet-wide
limit per tenant is a handler's ``per_tenant=True`` (``handlers.limits``).
"""

from __future__ import annotations

from ..core.models import Job


class TenantCap:
    """Runs in flight per tenant in one worker, and whether one more may start."""

    def __init__(self, cap: int | None) -> None:
        self.cap = cap
        self.running: dict[str | None, int] = {}

    def admit(self, job: Job) -> str | None:
        """None once ``job`` counts against its tenant; else why it may not start now."""
        if self.cap is None:
            return None
        count = self.running.get(job.tenant, 0)
        if count >= self.cap:
            tenant = "jobs with no tenant" if job.tenant is None else f"tenant {job.tenant!r}"
            return f"{tenant} already has {count} runs in this worker (tenant_concurrency)"
        self.running[job.tenant] = count + 1
        return None

    def leave(self, job: Job) -> None:
        """An admitted run of ``job`` ended."""
        if self.cap is None:
            return
        left = self.running[job.tenant] - 1
        if left:
            self.running[job.tenant] = left
        else:
            del self.running[job.tenant]
