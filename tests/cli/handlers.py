"""Handlers the worker tests import by name, as ``sqsjobs worker tests.cli.handlers:registry``.

``sleep`` works for as long as its payload says, capped by ``CLI_TEST_SLEEP_CAP``: a job
interrupted in one worker process can be finished quickly by the next one. ``note`` logs
its payload's text through ``ctx.log``, once plainly and once with a traceback, as a
handler reporting a problem it recovered from would.
"""

from __future__ import annotations

import asyncio
import os

from sqsjobs import JobContext, JobRegistry

SLEEP_CAP = "CLI_TEST_SLEEP_CAP"

registry = JobRegistry()
empty = JobRegistry()
not_a_registry = 42


@registry.handler("sleep")
async def sleep(payload: dict[str, float]) -> dict[str, float]:
    seconds = min(float(payload["seconds"]), float(os.environ.get(SLEEP_CAP, "inf")))
    await asyncio.sleep(seconds)
    return {"slept": seconds}


@registry.handler("note")
def note(payload: dict[str, str], ctx: JobContext) -> dict[str, int]:
    text = payload["text"]
    ctx.log.info("Noted %s", text, extra={"chars": len(text)})
    try:
        int(text)
    except ValueError:
        ctx.log.warning("Not a number, kept as text", exc_info=True)
    return {"chars": len(text)}


# A registry with a cron of its own, for ``sqsjobs worker --cron``: both run.
scheduled = JobRegistry()
scheduled.cron("* * * * *", "reports.rollup", {"scope": "tenants"})


@scheduled.handler("reports.tick")
@scheduled.handler("reports.rollup")
def report(payload: object) -> str:
    return f"ran with {payload}"
