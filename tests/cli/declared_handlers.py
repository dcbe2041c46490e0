"""A registry whose handlers declare options, for ``sqsjobs enqueue --app``.

Imported by name, as ``tests.cli.declared_handlers:registry``; ``sqsjobs worker`` would
take the same value.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from sqsjobs import JobRegistry


class Invoice(BaseModel):
    number: str
    total_cents: int = Field(gt=0)


registry = JobRegistry()
mapping = {"invoices.void": lambda ctx: None}  # a plain mapping is a registry too


@registry.handler("invoices.send", max_attempts=3, timeout=120, lease=45)
def send(payload: Invoice) -> str:
    return f"sent {payload.number}"
