"""CloudWatch Embedded Metric Format: one JSON line on stdout per run start and run end,
and per queue for each count of its open jobs.

CloudWatch Logs turns each such line into metric data points (no PutMetricData call,
no credentials, nothing to flush): Lambda ships its stdout there, and so does an ECS
task's ``awslogs`` log driver. The document, per the EMF specification:

    {"_aws": {"Timestamp": <epoch ms>,
              "CloudWatchMetrics": [{"Namespace": "sqsjobs",
                                     "Dimensions": [["Queue", "JobName"], ["Queue"]],
                                     "Metrics": [{"Name": "JobsCompleted", "Unit": "Count"},
                                                 {"Name": "RunDuration", "Unit": "Seconds"}]}]},
     "Queue": "emails", "JobName": "email.send", "JobsCompleted": 1, "RunDuration": 0.734,
     "Outcome": "completed"}

Each line names two dimension sets, so every value is also rolled up per queue (the
templates' alarms watch those). Members outside the directive (``Outcome``) are plain
log fields for Logs Insights.

Written here rather than with ``aws-embedded-metrics`` or Powertools' ``Metrics``: the
former requires aiohttp (which the Lambda import must not load), flushes through
coroutines and, outside Lambda, sends to a CloudWatch agent's socket rather than stdout;
the latter keeps its metric set in class-level state shared by every instance in the
process and flushes once per invocation, while a worker's runs end one by one and
concurrently. The format itself is a small documented JSON shape, built below by one
function.
"""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Mapping
from typing import Any, TextIO

from .metrics import DEFAULT_NAMESPACE, OPEN_STATUSES, Metrics

QUEUE, JOB_NAME = "Queue", "JobName"
BY_JOB: list[list[str]] = [[QUEUE, JOB_NAME], [QUEUE]]
BY_QUEUE: list[list[str]] = [[QUEUE]]

# Each outcome's count metric; the CloudFormation alarms and dashboard use these names.
OUTCOME_METRICS = {
    "completed": "JobsCompleted",
    "retried": "JobsRetried",
    "dead": "JobsDead",
    "released": "JobsReleased",
    "deferred": "JobsDeferred",
    "lease_lost": "LeaseLost",
    "cancelled": "JobsCancelled",
    "unrecorded": "OutcomesUnrecorded",
}

# Each open status's gauge (``Metrics.counted``): nouns, where the run counters are verbs.
COUNT_METRICS = {
    "queued": "QueuedJobs",
    "delayed": "DelayedJobs",
    "running": "RunningJobs",
    "waiting": "WaitingJobs",
}


def emf_document(
    namespace: str,
    dimensions: list[list[str]],
    fields: dict[str, str],
    values: dict[str, tuple[float, str]],
    timestamp: float,
) -> dict[str, Any]:
    """One EMF document: ``values`` maps a metric name to its value and unit."""
    directive = {
        "Namespace": namespace,
        "Dimensions": dimensions,
        "Metrics": [{"Name": name, "Unit": unit} for name, (_, unit) in values.items()],
    }
    return {
        "_aws": {"Timestamp": int(timestamp * 1000), "CloudWatchMetrics": [directive]},
        **fields,
        **{name: value for name, (value, _) in values.items()},
    }


class EmfMetrics(Metrics):
    """Writes EMF lines to ``stream`` (stdout, looked up at each write, by default)."""

    def __init__(self, namespace: str = DEFAULT_NAMESPACE, stream: TextIO | None = None) -> None:
        if not namespace or not namespace.isascii() or len(namespace) > 255:
            raise ValueError(f"Invalid metrics namespace {namespace!r}: 1-255 ASCII characters")
        self.namespace = namespace
        self._stream = stream

    def started(self, queue: str, name: str, wait: float) -> None:
        """Write ``JobsStarted`` and ``QueueWait`` (seconds) for the run's queue and job."""
        values = {"JobsStarted": (1.0, "Count"), "QueueWait": (round(wait, 6), "Seconds")}
        self._write(BY_JOB, {QUEUE: queue, JOB_NAME: name}, values)

    def ended(self, queue: str, name: str, outcome: str, duration: float | None) -> None:
        """Write the outcome's count (``OUTCOME_METRICS``) and ``RunDuration`` if it ran."""
        values = {OUTCOME_METRICS[outcome]: (1.0, "Count")}
        if duration is not None:
            values["RunDuration"] = (round(duration, 6), "Seconds")
        self._write(BY_JOB, {QUEUE: queue, JOB_NAME: name, "Outcome": outcome}, values)

    def refused(self, queue: str, count: int) -> None:
        """Write ``ClaimRefused`` for ``queue``; nothing when ``count`` is 0."""
        if count > 0:
            self._write(BY_QUEUE, {QUEUE: queue}, {"ClaimRefused": (float(count), "Count")})

    def counted(self, queue: str, counts: Mapping[str, int]) -> None:
        """Write one gauge per open status (``QueuedJobs``, ...), zeros included."""
        values = {COUNT_METRICS[s]: (float(counts.get(s, 0)), "Count") for s in OPEN_STATUSES}
        self._write(BY_QUEUE, {QUEUE: queue}, values)

    def _write(
        self, dimensions: list[list[str]], fields: dict[str, str], values: dict[str, Any]
    ) -> None:
        document = emf_document(self.namespace, dimensions, fields, values, time.time())
        line = json.dumps(document, separators=(",", ":"), ensure_ascii=False) + "\n"
        stream = self._stream if self._stream is not None else sys.stdout
        stream.write(line)  # one write per line: lines of concurrent runs never interleave
        stream.flush()
