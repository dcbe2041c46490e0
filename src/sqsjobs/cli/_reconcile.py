"""``sqsjobs reconcile``: one reconciler pass, on demand (workers run it periodically).

It re-sends the messages of jobs that waited longer than ``--grace`` without being
claimed (a producer died between its DynamoDB write and its SQS send, say) and marks
dead the jobs whose messages the redrive policy moved to a dead-letter queue. Running
it while workers serve is safe: every repair is a conditional write, and a duplicate
message is discarded at claim. A queue the store does not have is bad usage (exit 2), as
it is for ``stats`` and ``dlq``.
"""

from __future__ import annotations

import click

from .. import JobConfigError
from ._config import StoreConfig, store_options
from ._errors import usage_error
from ._options import queues_option, seconds_option

DEFAULT_GRACE = 900.0
GRACE_HELP = "How long a job may wait unclaimed before its message is re-sent."


@click.command()
@queues_option("Only this queue; repeat for several (default: every queue).")
@seconds_option("--grace", GRACE_HELP, default=DEFAULT_GRACE)
@store_options
def reconcile(queues: tuple[str, ...], grace: float, store: StoreConfig) -> None:
    """Re-send lost messages and record jobs the dead-letter queue took; print what changed."""
    with store.open() as opened:
        names = list(queues) or list(opened.queue_urls)
        try:
            report = opened.sync.reconcile(grace=grace, queues=names)
        except JobConfigError as error:
            raise usage_error(error) from error
    click.echo(
        f"Reconciled {', '.join(names)}: re-sent {report.resent} lost message(s); "
        f"{report.dead} job(s) marked dead, their messages being in the dead-letter queue; "
        f"{report.copied} dead job(s) given the dead-letter copy they lacked"
    )
