"""Job ids as an operator types them: the full 32 characters, or a unique prefix.

A full id goes straight to the store's ``get`` (one read). The store has no lookup by
prefix (records are keyed by the whole id), so a prefix is resolved by paging ``list``
over every queue and status, 1000 records a page, and keeping the ids that start with
it: the cost grows with the number of live jobs (a few queries per thousand records),
fine for an operator at a terminal, not for a script in a loop; scripts should pass
full ids (``jobs list --json`` prints them). At least ``MIN_PREFIX`` characters are
required, so the 8-character ids the demo prints work and a stray short word does not
match half the table.

Every id is ``uuid4().hex``: 32 characters 0-9 and a-f. Text that cannot be one, or the
start of one, is refused as bad usage (exit 2) before anything is read: it names no job,
and DynamoDB itself refuses a key over 2048 bytes with an error that would not say so.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from .. import Job, SyncJobQueue
from ._errors import CommandFailed, usage_error

FULL_ID = 32
ID_CHARACTERS = re.compile(r"[0-9a-f]*")
SHOWN_CHARACTERS = 40
MIN_PREFIX = 6
PAGE = 1000
SHOWN_MATCHES = 10


def resolve(producer: SyncJobQueue, given: str) -> str:
    """The one job id ``given`` names; a full id is returned as it is, not looked up.

    Raises:
        click.UsageError: ``given`` cannot be (the start of) an id, is shorter than
            ``MIN_PREFIX``, or matches several jobs.
        CommandFailed: no job's id starts with ``given``.
    """
    if len(given) > FULL_ID or ID_CHARACTERS.fullmatch(given) is None:
        raise usage_error(
            f"Job id {_shown(given)} is not a job id: ids are {FULL_ID} characters, each "
            f"0-9 or a-f; give one, or at least its first {MIN_PREFIX}"
        )
    if len(given) == FULL_ID:
        return given
    if len(given) < MIN_PREFIX:
        raise usage_error(
            f"Job id {given!r} is too short: give the full id or at least "
            f"{MIN_PREFIX} of its characters"
        )
    matches = [job for job in every_job(producer) if job.id.startswith(given)]
    if not matches:
        raise CommandFailed(missing(given))
    if len(matches) > 1:
        raise usage_error(ambiguous(given, matches))
    return matches[0].id


def every_job(producer: SyncJobQueue) -> Iterator[Job]:
    """Every live record of every queue, oldest first, a page at a time."""
    cursor: str | None = None
    while True:
        page = producer.list(limit=PAGE, cursor=cursor)
        yield from page.jobs
        if page.next_cursor is None:
            return
        cursor = page.next_cursor


def ambiguous(given: str, matches: list[Job]) -> str:
    shown = "; ".join(
        f"{job.id} ({job.queue} {job.name} {job.status.value})" for job in matches[:SHOWN_MATCHES]
    )
    more = f"; and {len(matches) - SHOWN_MATCHES} more" if len(matches) > SHOWN_MATCHES else ""
    return (
        f"Job id prefix {given!r} matches {len(matches)} jobs: {shown}{more}; give more characters"
    )


def _shown(given: str) -> str:
    """``given`` quoted for a message, cut short: it may be a whole file pasted by mistake."""
    if len(given) <= SHOWN_CHARACTERS:
        return repr(given)
    return f"{given[:SHOWN_CHARACTERS]!r}… ({len(given)} characters)"


def missing(job_id: str) -> str:
    return f"No job {job_id!r} (unknown, or removed when its retention period ended)"
