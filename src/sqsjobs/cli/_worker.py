"""``sqsjobs worker``: serve jobs from the store with an application's handlers.

The process an ECS service or an EC2 unit runs. It imports the registry (a
``JobRegistry`` or a mapping of job names to handlers, named ``MODULE:ATTRIBUTE`` as
uvicorn and rq name theirs, with the working directory importable), then runs
``JobWorker.run``, which drains on SIGTERM or SIGINT: running jobs get ``--grace``
seconds to finish and the rest are released, attempt not counted. ECS waits
``stopTimeout`` (30 s by default) between SIGTERM and SIGKILL, so keep ``--grace`` below it.

Beside the worker runs the reconciler (``SqsJobStore.reconcile``) every few minutes,
so a job whose message was lost (a producer that died between its DynamoDB write and
its SQS send) or moved to the dead-letter queue by the redrive policy is repaired even
when nobody runs ``sqsjobs reconcile``. Each pass is idempotent, so every replica may
run it. Logs go to stderr, one line per record, for the container's log driver:
JSON unless stderr is a terminal (``--log-format``, see ``_logs``).

``--metrics`` is off unless asked for: ``emf`` writes CloudWatch Embedded Metric Format
lines to stdout (metrics once the log driver ships stdout to CloudWatch Logs);
``prometheus`` serves ``/metrics`` on ``--metrics-port`` (the ``metrics`` extra).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import click

from .. import JobConfigError, JobQueue, JobRegistry, JobWorker
from ..core.errors import describe_error
from ..cron.schedule import Cron
from ..observe.log import LOGGER_NAME
from ..observe.metrics import (
    DEFAULT_NAMESPACE,
    DEFAULT_PORT,
    MODES,
    OFF,
    Metrics,
    MetricsMode,
    publish_counts,
)
from ..observe.outputs import metrics_for
from ..worker.served_queues import served_queues
from ._app import Handlers, load_handlers
from ._config import StoreConfig, default_queue, store_options
from ._cron import cron_options, log_crons
from ._errors import usage_error
from ._logs import configure_logging, log_format_option
from ._options import Seconds, queues_option, seconds_option

if TYPE_CHECKING:
    from ..aws import SqsJobStore

_logger = logging.getLogger(f"{LOGGER_NAME}.cli")


DEFAULT_WAIT_TIME = 20.0  # SQS's longest long poll: the fewest receives while idle


@dataclass(frozen=True)
class WorkerOptions:
    queues: Sequence[str]
    concurrency: int
    grace: float
    reconcile_every: float
    cron: Sequence[Cron] = ()
    tenant_concurrency: int | None = None
    metrics: MetricsMode = "off"
    metrics_port: int = DEFAULT_PORT
    metrics_namespace: str = DEFAULT_NAMESPACE
    wait_time: float = DEFAULT_WAIT_TIME


GRACE_HELP = "On SIGTERM/SIGINT, how long running jobs may finish before they are released."
RECONCILE_HELP = "Seconds between reconciler passes; 0 turns them off."
WAIT_TIME_HELP = (
    "Longest SQS long poll, 1 to 20 s: an idle worker sends one ReceiveMessage per queue "
    "this often, and a stop waits up to this long for the last one to end."
)


@click.command()
@click.argument("handlers", metavar="MODULE:REGISTRY", callback=load_handlers)
@queues_option("Queue to serve, in priority order; repeat for several (default: every queue).")
@click.option(
    "--concurrency",
    "-c",
    type=click.IntRange(1, 1000),
    default=1,
    show_default=True,
    help="Jobs run at once.",
)
@click.option(
    "--tenant-concurrency",
    type=click.IntRange(1, 1000),
    default=None,
    help="At most this many of one tenant's jobs run at once in this worker; "
    "the others go back with a short delay, their attempt not counted.",
)
@seconds_option("--grace", GRACE_HELP, default=20.0)
@seconds_option("--reconcile-every", RECONCILE_HELP, default=300.0)
@click.option(
    "--wait-time",
    type=Seconds(1.0, 20.0),
    default=DEFAULT_WAIT_TIME,
    show_default=True,
    metavar="SECONDS",
    envvar="SQSJOBS_WAIT_TIME",
    show_envvar=True,
    help=WAIT_TIME_HELP,
)
@click.option(
    "--metrics",
    type=click.Choice(MODES),
    default="off",
    show_default=True,
    envvar="SQSJOBS_METRICS",
    show_envvar=True,
    help="Run metrics: CloudWatch EMF lines on stdout, a Prometheus endpoint, or none.",
)
@click.option(
    "--metrics-port",
    type=click.IntRange(0, 65535),
    default=DEFAULT_PORT,
    show_default=True,
    envvar="SQSJOBS_METRICS_PORT",
    help="Port of the Prometheus endpoint (with --metrics prometheus; 0 picks a free one).",
)
@click.option(
    "--metrics-namespace",
    default=DEFAULT_NAMESPACE,
    show_default=True,
    envvar="SQSJOBS_METRICS_NAMESPACE",
    help="CloudWatch namespace of the EMF metrics (the stack's MetricsNamespace).",
)
@cron_options
@log_format_option()
@store_options
@click.pass_context
def worker(
    ctx: click.Context,
    handlers: Handlers,
    queues: tuple[str, ...],
    concurrency: int,
    tenant_concurrency: int | None,
    grace: float,
    reconcile_every: float,
    wait_time: float,
    metrics: str,
    metrics_port: int,
    metrics_namespace: str,
    crons: tuple[Cron, ...],
    log_format: str | None,
    store: StoreConfig,
) -> None:
    """Run jobs with the handlers in MODULE:REGISTRY until SIGTERM or Ctrl-C."""
    configure_logging(log_format, debug=bool(getattr(ctx.obj, "debug", False)))
    options = WorkerOptions(
        queues,
        concurrency,
        grace,
        reconcile_every,
        crons,
        tenant_concurrency,
        cast(MetricsMode, metrics),  # one of MODES: click.Choice checked it
        metrics_port,
        metrics_namespace,
        wait_time,
    )
    asyncio.run(serve(store, handlers, options))


async def serve(config: StoreConfig, handlers: Handlers, options: WorkerOptions) -> None:
    """Run the worker and the periodic reconciler until a signal drains the worker."""
    store = config.open(patient=True, wait_time=options.wait_time)
    measured = open_metrics(options)
    try:
        try:
            registry = JobRegistry.from_handlers(handlers)
        except JobConfigError as error:
            raise usage_error(error) from error
        served = served_queues(store, default_queue(store), registry, options.queues or None)
        worker = build_worker(
            store,
            registry,
            served,
            options.concurrency,
            options.cron,
            tenant_concurrency=options.tenant_concurrency,
            metrics=measured,
        )
        every = options.reconcile_every
        _logger.info(
            "Serving %s from table %s; reconciler %s; SIGTERM or Ctrl-C drains (grace %gs)",
            ", ".join(served),
            store.table_name,
            f"every {every:g}s" if every > 0 else "off",
            options.grace,
        )
        log_crons(handlers, options.cron)
        reconciler = asyncio.create_task(reconcile_periodically(store, every, measured))
        try:
            await worker.run(grace=options.grace)
        finally:
            reconciler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await reconciler
    finally:
        measured.close()
        await store.aclose()


def open_metrics(options: WorkerOptions) -> Metrics:
    """The worker's metrics; the Prometheus endpoint is listening once this returns."""
    if options.metrics != "prometheus":
        try:
            return metrics_for(options.metrics, namespace=options.metrics_namespace)
        except ValueError as error:  # a namespace CloudWatch would not take
            raise usage_error(f"--metrics-namespace: {error}") from error
    try:
        measured = metrics_for("prometheus", port=options.metrics_port)
    except ImportError as missing:
        raise usage_error(
            f"--metrics prometheus needs prometheus-client: pip install 'sqsjobs[metrics]' "
            f"({missing})"
        ) from missing
    except OSError as error:
        raise usage_error(f"--metrics-port {options.metrics_port}: {error}") from error
    _logger.info("Prometheus metrics on port %s at /metrics", getattr(measured, "port", None))
    return measured


def build_worker(
    store: SqsJobStore,
    handlers: Handlers,
    served: Sequence[str],
    concurrency: int,
    cron: Sequence[Cron] = (),
    *,
    tenant_concurrency: int | None = None,
    metrics: Metrics | None = None,
) -> JobWorker:
    """The worker; a queue the store lacks, or a registry it refuses, is bad usage."""
    unknown = sorted(set(served) - set(store.queue_urls))
    if unknown:
        known = ", ".join(store.queue_urls)
        raise usage_error(f"Unknown queue(s) {', '.join(unknown)}; this store has {known}")
    try:
        for name in served:  # a queue that is a dead-letter queue is refused here, not later
            store.sync.describe(name)
        queue = JobQueue(store, default_queue=default_queue(store))
        return JobWorker(
            queue,
            handlers,
            queues=served,
            concurrency=concurrency,
            tenant_concurrency=tenant_concurrency,
            cron=cron,
            metrics=metrics if metrics is not None else "off",
        )
    except JobConfigError as error:
        raise usage_error(error) from error


async def reconcile_periodically(store: SqsJobStore, every: float, metrics: Metrics = OFF) -> None:
    """A reconciler pass now and then every ``every`` seconds; a failed pass is logged.

    With metrics on, each pass is followed by a count of every queue's open jobs
    (``stats``), published as gauges: a job waiting for its parents has no message, so
    no SQS metric shows it. A count costs what ``sqsjobs stats`` does (docs/explanation/scaling.md).
    """
    if every <= 0:
        return
    while True:
        try:
            report = await store.reconcile()
            if metrics is not OFF:
                publish_counts(metrics, await store.stats())
        except Exception as error:
            _logger.warning(
                "Reconciler pass failed (will retry in %gs): %s", every, describe_error(error)
            )
        else:
            if report.resent or report.dead or report.copied:
                _logger.info(
                    "Reconciler re-sent %d lost message(s), dead-lettered %d job(s) "
                    "from the dead-letter queue, sent %d missing dead-letter copy(ies)",
                    report.resent,
                    report.dead,
                    report.copied,
                )
        await asyncio.sleep(every)
