"""Error text a worker stores and logs: no payload values, one line, no credentials.

``last_error`` and the log records are read by people and tools that are not meant to
see what a job carried (a card number, a customer's name), and a log line is one event:
text a handler controls must not be able to end it and start a forged one.
"""

from __future__ import annotations

import logging
from typing import Any, Literal

import pytest
from pydantic import BaseModel, Field, field_validator

from sqsjobs import JobRegistry, JobStatus, JobWorker

from .conftest import Env

CARD = "4111-1111-1111-1111"
HOLDER = "Zoë Åsa-Ŝmith"
EMAIL = "zoë.ŝmith@example.com"
SECRETS = (CARD, HOLDER, EMAIL, "zwölf", "Zoë", "zoë")
# Every character str.splitlines() breaks at, and how last_error spells it.
LINE_BREAKS = {
    "\n": "\\n",
    "\r": "\\r",
    "\x0b": "\\x0b",
    "\x0c": "\\x0c",
    "\x1c": "\\x1c",
    "\x1d": "\\x1d",
    "\x1e": "\\x1e",
    "\x85": "\\x85",
    "\u2028": "\\u2028",
    "\u2029": "\\u2029",
}


class Line(BaseModel):
    sku: str
    qty: int


class Charge(BaseModel):
    card: str = Field(pattern=r"^\d{16}$")
    holder: str = Field(max_length=5)
    scheme: Literal["visa", "amex"]
    lines: list[Line]
    email: str

    @field_validator("email")
    @classmethod
    def not_blocked(cls, value: str) -> str:
        raise ValueError(f"{value} is on the block list")  # a validator quoting its input


def record_text(record: logging.LogRecord) -> str:
    """Everything a formatter could print from a record: message, args and extra fields."""
    return f"{record.getMessage()} {record.args!r} {record.__dict__!r}"


async def test_a_payload_failing_its_model_stores_and_logs_locations_and_types_only(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    registry = JobRegistry()
    registry.add("card.charge", lambda payload: None, model=Charge)
    payload = {
        "card": CARD,
        "holder": HOLDER,
        "scheme": "Zoë",
        "lines": [{"sku": "lamp", "qty": 2}, {"sku": "desk", "qty": "zwölf"}],
        "email": EMAIL,
    }
    with caplog.at_level(logging.DEBUG, logger="sqsjobs"):
        job = (await env.queue.enqueue("card.charge", payload, tenant="acme-eu")).job
        assert await JobWorker(env.queue, registry).run_once()
    dead = await env.queue.get(job.id)
    assert dead is not None and dead.status is JobStatus.DEAD and dead.last_error is not None
    assert dead.last_error == (
        "JobFatalError: Payload does not match Charge: 5 errors: card (string_pattern_mismatch), "
        "holder (string_too_long), scheme (literal_error), lines.1.qty (int_parsing), "
        "email (value_error)"
    )
    logged = [record_text(record) for record in caplog.records]
    assert any("jobs.dead" in text for text in logged)
    for secret in SECRETS:
        assert secret not in dead.last_error
        assert all(secret not in text for text in logged), secret


async def test_a_payload_of_the_wrong_shape_names_the_whole_payload(env: Env) -> None:
    registry = JobRegistry()
    registry.add("card.charge", lambda payload: None, model=Charge)
    job = (await env.queue.enqueue("card.charge", [CARD, HOLDER])).job
    assert await JobWorker(env.queue, registry).run_once()
    dead = await env.queue.get(job.id)
    assert dead is not None and dead.last_error == (
        "JobFatalError: Payload does not match Charge: 1 error: payload (model_type)"
    )


async def test_the_failure_reaching_a_hook_carries_no_payload_value(env: Env) -> None:
    """A hook that logs the error with its traceback must not print the input either."""
    seen: list[BaseException] = []
    registry = JobRegistry()
    registry.add("card.charge", lambda payload: None, model=Charge)
    job = (await env.queue.enqueue("card.charge", {"card": CARD})).job
    worker = JobWorker(env.queue, registry, on_dead=lambda job, error: seen.append(error))
    assert await worker.run_once()
    assert [type(error).__name__ for error in seen] == ["JobFatalError"]
    chain = [seen[0], seen[0].__cause__, seen[0].__context__]
    assert all(CARD not in repr(link) and CARD not in str(link) for link in chain)
    assert (await env.queue.get(job.id)) is not None


@pytest.mark.parametrize("brk", LINE_BREAKS)
async def test_a_handler_cannot_forge_a_log_line_or_a_multi_line_last_error(
    env: Env, caplog: pytest.LogCaptureFixture, brk: str
) -> None:
    async def handler(payload: Any) -> None:
        raise ValueError(f"bad{brk}INFO sqsjobs jobs.complete forged line\r\n")

    with caplog.at_level(logging.DEBUG, logger="sqsjobs"):
        job = (await env.queue.enqueue("a", {"n": 1}, max_attempts=2)).job
        worker = JobWorker(env.queue, {"a": handler})
        assert await worker.run_once()
        env.clock.advance(1.0000003)
        assert await worker.run_once()
    dead = await env.queue.get(job.id)
    assert dead is not None and dead.status is JobStatus.DEAD and dead.last_error is not None
    forged = "INFO sqsjobs jobs.complete forged line"
    assert dead.last_error == f"ValueError: bad{LINE_BREAKS[brk]}{forged}\\r\\n"
    failures = [r for r in caplog.records if r.__dict__.get("event") in ("jobs.retry", "jobs.dead")]
    assert len(failures) == 2
    for record in failures:
        assert record.__dict__["error"] == dead.last_error
        assert dead.last_error in record.getMessage()
        for text in (record.getMessage(), record.__dict__["error"]):
            assert not any(ch in text for ch in LINE_BREAKS), text


async def test_a_failing_hook_logs_one_line(env: Env, caplog: pytest.LogCaptureFixture) -> None:
    def on_complete(job: Any) -> None:
        raise RuntimeError("hook broke\nERROR sqsjobs jobs.dead forged")

    with caplog.at_level(logging.DEBUG, logger="sqsjobs"):
        await env.queue.enqueue("a", {"n": 1})
        assert await JobWorker(env.queue, {"a": lambda ctx: 7}, on_complete=on_complete).run_once()
    [record] = [r for r in caplog.records if r.__dict__.get("event") == "jobs.hook_failed"]
    assert record.__dict__["error"] == "RuntimeError: hook broke\\nERROR sqsjobs jobs.dead forged"
    assert "\n" not in record.getMessage()
    assert record.getMessage().endswith("RuntimeError: hook broke\\nERROR sqsjobs jobs.dead forged")


async def test_credentials_in_a_url_are_neither_stored_nor_logged(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    async def handler(payload: Any) -> None:
        raise ConnectionError(
            'Could not connect to "https://svc-user:p%40ss-Wörd@api.example.invalid:8443/v1'
            '?X-Amz-Credential=AKIAEXAMPLE%2F20300101&X-Amz-Signature=f00dfeed&page=2"'
        )

    with caplog.at_level(logging.DEBUG, logger="sqsjobs"):
        job = (await env.queue.enqueue("a", {"n": 1}, max_attempts=1)).job
        assert await JobWorker(env.queue, {"a": handler}).run_once()
    dead = await env.queue.get(job.id)
    assert dead is not None and dead.last_error == (
        'ConnectionError: Could not connect to "https://***@api.example.invalid:8443/v1'
        '?X-Amz-Credential=***&X-Amz-Signature=***&page=2"'
    )
    for text in [dead.last_error, *(record_text(r) for r in caplog.records)]:
        for secret in ("svc-user", "p%40ss", "AKIAEXAMPLE", "f00dfeed"):
            assert secret not in text
