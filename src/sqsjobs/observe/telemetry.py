"""One run as metrics and tracing see it: begun at most once, ended once.

``JobRun`` holds one ``Observed`` per claimed job. ``begin`` marks the start (the
handler is about to run, or the job fails before one can): it counts the start with
its queue wait and opens the run's span. ``end`` reports the outcome the store accepted,
with the duration when the run began, and closes the span with the error, if any. A
run deferred before it began counts only its ``deferred`` outcome: it never started,
and its next claim will measure its wait again.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

from ..core.models import Job
from ..core.times import epoch
from .metrics import Metrics
from .tracing import RunSpan


class Observed:
    __slots__ = ("_began", "_job", "_metrics", "_span", "_worker_id")

    def __init__(self, job: Job, metrics: Metrics, worker_id: str) -> None:
        self._job = job
        self._metrics = metrics
        self._worker_id = worker_id
        self._began: float | None = None
        self._span: RunSpan | None = None

    def begin(self, now: float) -> None:
        """The run starts at ``now``; a second call changes nothing."""
        if self._began is not None:
            return
        self._began = time.monotonic()
        job = self._job
        due = max(epoch(job.created_at), epoch(job.run_at))
        self._metrics.started(job.queue, job.name, max(0.0, now - due))
        self._span = RunSpan.start(job, self._worker_id)

    @contextlib.contextmanager
    def current(self) -> Iterator[None]:
        """The run's span is current inside (a task created here runs in it)."""
        if self._span is None:
            yield
            return
        with self._span.current():
            yield

    def end(self, outcome: str | None, error: BaseException | None) -> None:
        """Report ``outcome``; None when the run ended without one (it raised outside its
        handler, or a stopping worker cancelled it): its span ends as ``interrupted`` and
        nothing is counted, unless ``count`` is told later what became of the job."""
        if outcome is not None:
            self.count(outcome)
        if self._span is not None:
            self._span.end(outcome or "interrupted", error)

    def count(self, outcome: str) -> None:
        """Count ``outcome`` with the run's duration (none if it never began)."""
        job = self._job
        duration = None if self._began is None else time.monotonic() - self._began
        self._metrics.ended(job.queue, job.name, outcome, duration)
