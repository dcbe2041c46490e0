"""The reconciler for deployments with no worker process: a Lambda function on a schedule.

    reconcile = make_reconcile_handler(store=SqsJobStore.from_env())

A deployment whose workers are all Lambda functions has no ``sqsjobs worker`` to run the
periodic pass, so nothing else re-sends the message of a job whose producer failed
between its write and its send, or records dead a job the redrive policy moved to the
dead-letter queue. The templates schedule this handler (``ReconcileFunctionArn``, every
5 minutes by default). Each pass is idempotent, so overlapping ones are safe. The pass
runs on boto3 alone, like the producer's blocking face.

After the pass, with metrics on (EMF by default, as for ``make_lambda_handler``), every
queue's open jobs are counted (``stats``) and published as gauges (``QueuedJobs``,
``DelayedJobs``, ``RunningJobs``, ``WaitingJobs``): a job waiting for its parents or
its batch has no message, so no SQS metric shows it, and one scheduled function counts
for the whole deployment. A count costs what ``sqsjobs stats`` does (docs/explanation/scaling.md).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from typing import Any

from ..core.validation import seconds
from ..observe.log import LOGGER_NAME, Event
from ..observe.metrics import OFF, Metrics, MetricsMode, publish_counts
from ..observe.outputs import metrics_for, metrics_from_env
from .store.sqs_store import SqsJobStore

ReconcileHandler = Callable[[Mapping[str, Any], Any], dict[str, int]]
"""What ``make_reconcile_handler`` returns: ``handler(event, context)`` for a scheduled
invocation, returning ``{"resent": n, "dead": m}``."""


def make_reconcile_handler(
    *,
    store: SqsJobStore,
    grace: float = 900.0,
    metrics: MetricsMode | Metrics | None = None,
) -> ReconcileHandler:
    """A handler for a scheduled invocation: one reconciler pass, then a count of the
    open jobs as gauges; returns ``{"resent", "dead"}``.

    Args:
        store: The store to reconcile: every queue it has.
        grace: Seconds a record may look stranded (due or leased, yet unclaimed) before
            the pass sends it a fresh message; waiting jobs and open batches likewise.
        metrics: ``"emf"``, ``"prometheus"``, ``"off"`` or a ``Metrics``; left out,
            ``SQSJOBS_METRICS`` from the environment, else ``"emf"``. ``"off"`` skips the
            count and its reads.

    Returns:
        ``handler(event, context)``; it raises what the pass raises (``JobStoreError``),
        so Lambda's error metric sees a pass that failed.

    Raises:
        ValueError: An invalid ``grace``.
        JobConfigError: An invalid ``metrics``.
    """
    seconds(grace, "grace", code=None)
    logger = logging.getLogger(LOGGER_NAME)
    measured = metrics_for(metrics) if metrics is not None else metrics_from_env("emf")

    def handler(event: Mapping[str, Any], context: Any) -> dict[str, int]:
        report = store.sync.reconcile(grace=grace)
        logger.info(
            "Reconciler pass: re-sent %d lost message(s), dead-lettered %d job(s)",
            report.resent,
            report.dead,
            extra={"event": Event.RECONCILED, "resent": report.resent, "dead": report.dead},
        )
        if measured is not OFF:
            publish_counts(measured, store.sync.stats())
        return {"resent": report.resent, "dead": report.dead}

    return handler
