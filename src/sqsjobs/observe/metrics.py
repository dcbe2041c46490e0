"""Run metrics: what a worker or a Lambda handler measures, and where it goes.

``JobRun`` (``worker.run``) reports every run to one ``Metrics`` object: the worker and the
Lambda handler both hand theirs in through ``RunSettings``, so the measuring is written
once. Per queue and job name:

    started    a run began (its handler is about to run, or it fails before one: unknown
               name, payload refused by its model); with its queue wait, from the later
               of its enqueue and its ``run_at`` to this start
    ended      the outcome the store accepted, with the run's duration: completed,
               retried, dead, released (stop or invocation deadline), deferred (held back
               by a limit or a tenant cap, never started), lease_lost, cancelled (by an
               operator while it ran), unrecorded (the store kept failing)
    refused    per queue: delivered messages whose claim write was refused (a duplicate
               delivery, a job not yet due, gone or terminal, malformed): SQS only, the
               memory store never delivers what it cannot claim
    counted    per queue, a gauge: how many jobs are queued, delayed, running and waiting
               (for parents or a batch) as a count just read them (``publish_counts``,
               after each reconciler pass); a waiting job has no message, so SQS's own
               depth metrics never see it

Which names and queues a metric carries is bounded by configuration, never by what a
producer or a message says, since each distinct value is a series of its own (a
Prometheus label value; an EMF dimension value, which CloudWatch bills as a custom
metric for each metric name): a job name with no registered handler is reported as
``UNREGISTERED`` when the runs' ``Metrics`` is a ``RegisteredNames`` over the registry
they run with (``JobWorker``'s is), and the queue is always one the worker or the
Lambda handler claims from, by the store's configuration (a claim takes only a job whose
record names that queue; a message naming another is refused and counted there).

Outputs (chosen in ``outputs``): ``"emf"`` (CloudWatch Embedded Metric Format lines on
stdout, ``emf``), ``"prometheus"`` (``prometheus-client``, the ``metrics`` extra,
``prometheus``), ``"off"``.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from typing import TYPE_CHECKING, Literal, get_args

if TYPE_CHECKING:  # the Lambda import builds no report class it does not use
    from ..core.reports import QueueStats

MetricsMode = Literal["emf", "prometheus", "off"]
MODES: tuple[str, ...] = get_args(MetricsMode)
DEFAULT_NAMESPACE = "sqsjobs"
DEFAULT_PORT = 9464  # the port OpenTelemetry's Prometheus exporter uses too

# Outcomes a run can end with, in the order they are documented and exported.
OUTCOMES = (
    "completed",
    "retried",
    "dead",
    "released",
    "deferred",
    "lease_lost",
    "cancelled",
    "unrecorded",
)

# The statuses of jobs not ended, each a gauge of ``counted``, in the order exported.
OPEN_STATUSES = ("queued", "delayed", "running", "waiting")


class Metrics:
    """Where runs are reported; this base records nothing (``metrics="off"``)."""

    def started(self, queue: str, name: str, wait: float) -> None:
        """A run began, ``wait`` seconds after its job became due."""

    def ended(self, queue: str, name: str, outcome: str, duration: float | None) -> None:
        """A run ended with ``outcome``; ``duration`` is None for one that never started."""

    def refused(self, queue: str, count: int) -> None:
        """``count`` messages delivered from ``queue`` were refused by their claim write."""

    def counted(self, queue: str, counts: Mapping[str, int]) -> None:
        """``counts``: how many of ``queue``'s jobs are in each of ``OPEN_STATUSES`` now."""

    def close(self) -> None:
        """Stop whatever the output serves (the Prometheus endpoint); idempotent."""


OFF = Metrics()

# What every job name without a registered handler is measured as; no job has this name
# (a job name starts with a letter).
UNREGISTERED = "(unregistered)"


class RegisteredNames(Metrics):
    """``metrics`` with every name ``registered`` lacks reported as ``UNREGISTERED``.

    Whoever may enqueue picks a job's name, and 50 made-up names would be 50 series (on
    CloudWatch, the billed metrics per name 50 times over). The registered names are the
    code's own and bound them; a job of any other name dead-letters when it runs
    ("Unknown job handler"), and the one value still counts those runs. ``registered``
    is asked at every report, so a handler added after the worker was built is measured
    by its name from then on.
    """

    def __init__(self, metrics: Metrics, registered: Container[str]) -> None:
        self.metrics = metrics
        self._registered = registered

    def _name(self, name: str) -> str:
        return name if name in self._registered else UNREGISTERED

    def started(self, queue: str, name: str, wait: float) -> None:
        self.metrics.started(queue, self._name(name), wait)

    def ended(self, queue: str, name: str, outcome: str, duration: float | None) -> None:
        self.metrics.ended(queue, self._name(name), outcome, duration)

    def refused(self, queue: str, count: int) -> None:
        self.metrics.refused(queue, count)

    def counted(self, queue: str, counts: Mapping[str, int]) -> None:
        self.metrics.counted(queue, counts)

    def close(self) -> None:
        self.metrics.close()


def publish_counts(metrics: Metrics, stats: Iterable[QueueStats]) -> None:
    """Each queue's open jobs by status, from a ``stats`` read, as ``metrics``' gauges."""
    for queue in stats:
        counts = {status.value: count for status, count in queue.counts.items()}
        metrics.counted(queue.queue, {status: counts.get(status, 0) for status in OPEN_STATUSES})
