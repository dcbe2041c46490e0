"""Prometheus series for long-running workers (``prometheus-client``, the ``metrics`` extra).

    sqsjobs_jobs_started_total{queue, job}              runs begun
    sqsjobs_job_outcomes_total{queue, job, outcome}     runs ended, by outcome (``metrics``)
    sqsjobs_run_duration_seconds{queue, job, outcome}   histogram of run durations
    sqsjobs_queue_wait_seconds{queue, job}              histogram, due (enqueue or run_at) to start
    sqsjobs_claim_refusals_total{queue}                 delivered messages whose claim was refused
    sqsjobs_jobs{queue, status}                         gauge, jobs not ended by status, as
                                                        last counted (``Metrics.counted``)

One outcome counter with an ``outcome`` label rather than a counter per outcome, as
Prometheus' naming guide asks, so ``sum by (outcome)`` and ratios need no name juggling.
prometheus-client keeps series in a process-wide registry; the series are made once per
registry (``_instruments``), so several workers in one process share them, and what one
scrape shows is the process's total. With ``port`` the registry is served over HTTP
(``prometheus_client.start_http_server``, a daemon thread) until ``close()``.
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, NamedTuple

from .metrics import OPEN_STATUSES, Metrics

if TYPE_CHECKING:
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram

# Seconds; runs from milliseconds to the 15-minute Lambda ceiling, waits likewise.
BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900)


class Instruments(NamedTuple):
    started: Counter
    outcomes: Counter
    duration: Histogram
    wait: Histogram
    refusals: Counter
    jobs: Gauge


# Per registry, since prometheus-client refuses a second series of one name on a registry.
_instruments: weakref.WeakKeyDictionary[CollectorRegistry, Instruments] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()


def instruments(registry: CollectorRegistry) -> Instruments:
    """The series on ``registry``, registered on first use."""
    from prometheus_client import Counter, Gauge, Histogram

    with _lock:
        found = _instruments.get(registry)
        if found is None:
            job = ["queue", "job"]
            found = Instruments(
                Counter("sqsjobs_jobs_started", "Runs begun.", job, registry=registry),
                Counter(
                    "sqsjobs_job_outcomes",
                    "Runs ended, by outcome.",
                    [*job, "outcome"],
                    registry=registry,
                ),
                Histogram(
                    "sqsjobs_run_duration_seconds",
                    "How long runs took, from start to the recorded outcome.",
                    [*job, "outcome"],
                    buckets=BUCKETS,
                    registry=registry,
                ),
                Histogram(
                    "sqsjobs_queue_wait_seconds",
                    "From a job being due (enqueue or run_at, the later) to its run's start.",
                    job,
                    buckets=BUCKETS,
                    registry=registry,
                ),
                Counter(
                    "sqsjobs_claim_refusals",
                    "Delivered messages whose claim write was refused.",
                    ["queue"],
                    registry=registry,
                ),
                Gauge(
                    "sqsjobs_jobs",
                    "Jobs not ended, by status, as last counted (after a reconciler pass).",
                    ["queue", "status"],
                    registry=registry,
                ),
            )
            _instruments[registry] = found
        return found


class PrometheusMetrics(Metrics):
    """Counts runs in ``registry`` (prometheus-client's default one unless given)."""

    def __init__(
        self,
        *,
        registry: CollectorRegistry | None = None,
        port: int | None = None,
        address: str = "0.0.0.0",
    ) -> None:
        import prometheus_client

        self.registry = registry if registry is not None else prometheus_client.REGISTRY
        self._series = instruments(self.registry)
        self._server: Any = None
        if port is not None:
            self._server, _ = prometheus_client.start_http_server(
                port, address, registry=self.registry
            )

    @property
    def port(self) -> int | None:
        """The port the endpoint listens on (the one chosen when 0 was asked), if served."""
        return None if self._server is None else int(self._server.server_port)

    def started(self, queue: str, name: str, wait: float) -> None:
        """Count the run in ``sqsjobs_jobs_started_total`` and observe its queue wait."""
        self._series.started.labels(queue, name).inc()
        self._series.wait.labels(queue, name).observe(wait)

    def ended(self, queue: str, name: str, outcome: str, duration: float | None) -> None:
        """Count the outcome and, for a run that started, observe its duration."""
        self._series.outcomes.labels(queue, name, outcome).inc()
        if duration is not None:
            self._series.duration.labels(queue, name, outcome).observe(duration)

    def refused(self, queue: str, count: int) -> None:
        """Add ``count`` to ``sqsjobs_claim_refusals_total`` for ``queue``."""
        if count > 0:
            self._series.refusals.labels(queue).inc(count)

    def counted(self, queue: str, counts: Mapping[str, int]) -> None:
        """Set ``sqsjobs_jobs`` for each open status of ``queue``, zeros included."""
        for status in OPEN_STATUSES:
            self._series.jobs.labels(queue, status).set(counts.get(status, 0))

    def close(self) -> None:
        """Stop serving the endpoint, if ``port`` started one; calling it again does nothing."""
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
