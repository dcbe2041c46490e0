"""A warning when a job's record did not get the options its handler declares.

The record is the one source of truth: a run applies the record's timeout, the store its
``max_attempts`` and ``lease``, and the job waits on the record's queue. A producer given
the registry (``JobQueue(store, registry=...)``) writes the handler's declared options
into the record; one without it (another service, ``sqsjobs enqueue`` without ``--app``)
writes the library's defaults (``core.defaults``), and the handler's ``max_attempts=3``
or ``timeout=120`` would then be ignored without a word.

So when a record holds exactly the library's default for an option its handler declares
differently, the run logs ``jobs.options_defaulted`` (WARNING), once per job name in this
process: the record's values, which apply, the handler's, and how to get those applied.
It reads only the claimed record and the registry: no request, no field of its own. A
timeout the producer passed on purpose (``Job.timeout_explicit``) is not reported; an
explicit ``max_attempts``, ``lease`` or queue equal to the library's default looks like
one left out, and is reported once.

The worker and the Lambda handler both run jobs through ``run.JobRun``, which calls
``check`` for every job it starts.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from ..core.defaults import DEFAULT_LEASE, DEFAULT_MAX_ATTEMPTS, DEFAULT_QUEUE, DEFAULT_TIMEOUT
from ..core.models import Job
from ..handlers.registry import NO_DEFAULTS, HandlerDefaults
from ..observe.log import Event

Log = Callable[..., None]  # ``JobRun._log``: (level, event, message, **extra)

LIBRARY = HandlerDefaults(DEFAULT_QUEUE, DEFAULT_MAX_ATTEMPTS, DEFAULT_TIMEOUT, DEFAULT_LEASE)
ADVICE = (
    "give the producer registry=... (JobQueue/SyncJobQueue(store, registry=registry), "
    "sqsjobs enqueue --app module:registry), or pass the options at enqueue"
)

warned: set[str] = set()  # job names reported by this process


def defaulted(job: Job, declared: HandlerDefaults) -> dict[str, tuple[Any, Any]]:
    """``{option: (record's value, handler's value)}`` for each option the handler
    declares differently from the library's default while the record holds that default."""
    record = HandlerDefaults(job.queue, job.max_attempts, job.timeout, job.lease)
    found: dict[str, tuple[Any, Any]] = {}
    for option, library in LIBRARY._asdict().items():
        wanted = getattr(declared, option)
        held = getattr(record, option)
        if wanted is None or wanted == library or held != library:
            continue
        if option == "timeout" and job.timeout_explicit:
            continue  # the producer chose it: not a default
        found[option] = (held, wanted)
    return found


def check(job: Job, declared: HandlerDefaults, log: Log) -> None:
    """Log once per job name when the record holds defaults the handler declares otherwise."""
    if declared == NO_DEFAULTS or job.name in warned:
        return
    options = defaulted(job, declared)
    if not options:
        return
    warned.add(job.name)
    applied = {option: held for option, (held, _) in options.items()}
    wanted = {option: value for option, (_, value) in options.items()}
    message = (
        f"Job {job.name!r} ({job.id}) runs with {_listed(applied)}, the library's defaults, "
        f"where its handler declares {_listed(wanted)}: its producer did not apply the "
        f"handler's options, and the record's apply. To apply the handler's, {ADVICE}. "
        "Logged once per job name by this process."
    )
    log(logging.WARNING, Event.OPTIONS_DEFAULTED, message, applied=applied, declared=wanted)


def _listed(options: dict[str, Any]) -> str:
    return ", ".join(f"{option}={_shown(value)}" for option, value in options.items())


def _shown(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:g}s"
    return repr(value) if isinstance(value, str) else str(value)
