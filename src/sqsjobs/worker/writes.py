"""An outcome's store write, and what a refusal of it means.

A write is the same call at every try, so the record it leaves can be recognised: its
status, written at its ``now``. A refusal is read against the record after it: the
write's own (a try whose response was lost), a cancellation, or another claim's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from enum import Enum
from typing import NamedTuple

from ..core.models import Job, JobStatus
from ..core.times import epoch

SAME_INSTANT = 1e-6  # a record's datetimes keep microseconds


class Written(Enum):
    WRITTEN = "written"
    RELEASED = "released"  # at a stop, instead of the write
    REFUSED = "refused"
    LOST = "lost"
    CANCELLED = "cancelled"
    UNRECORDED = "unrecorded"


class Write(NamedTuple):
    """One outcome's store write: the same call at every try.

    A NamedTuple, not a dataclass: this module loads at a Lambda function's cold start.
    """

    what: str  # "completion", "failure", "release", "deferral": for the log
    call: Callable[[], Awaitable[bool]]
    now: float  # the ``now`` it sends, so the record it leaves can be recognised
    leaves: JobStatus  # the status it sets
    instead: Callable[[], Write] | None = None  # a stopping worker's release in its place


class RefusedWhileHeld(Exception):
    """A write refused although the record read after it allows it."""

    def __init__(self) -> None:
        super().__init__("the store refused it while the lease was still this run's")


def shows(record: Job | None, write: Write) -> bool:
    """Whether ``record`` is the one ``write`` leaves: its status, written at its ``now``."""
    return (
        record is not None
        and record.status is write.leaves
        and abs(epoch(record.updated_at) - write.now) <= SAME_INSTANT
    )


def judged(record: Job | None, write: Write | None, otherwise: Written) -> Written:
    """What a refusal means, from the record read after it: our own write, a cancellation,
    or ``otherwise`` (another claim's, or nobody's)."""
    if write is not None and shows(record, write):
        return Written.WRITTEN
    if record is not None and record.status is JobStatus.CANCELLED:
        return Written.CANCELLED
    return otherwise
