"""``sqsjobs stats``: per queue, how many jobs are in each status and what SQS holds.

The counts come from the job records (terminal ones past their retention left out, as
every reader does); the message numbers are SQS's own approximate counts, the DLQ's
included. Beside them, the workers alive on each queue (their presence records), its
last claim and how long its job due first has waited; then, in words, what needs
attention: jobs waiting with no worker (which counts alone cannot tell from busy
workers or workers that cannot reach AWS), a long wait, dead letters, a job name no
worker serves. ``--watch`` keeps showing them (see ``_watch``).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

import click

from .. import JobConfigError
from ._config import StoreConfig, store_options
from ._errors import usage_error
from ._options import json_option, queues_option
from ._render import output_console, write_json_list
from ._render_stats import stats_record, stats_table
from ._watch import watch, watch_option

if TYPE_CHECKING:
    from ..aws import QueueStats


@click.command()
@queues_option("Only this queue; repeat for several (default: every queue).")
@json_option("a list with one object per queue")
@watch_option("the counts")
@store_options
def stats(
    queues: tuple[str, ...], as_json: bool, watch_every: float | None, store: StoreConfig
) -> None:
    """Show each queue's jobs by status, its SQS messages and its dead-letter queue."""
    with store.open() as opened:

        def take() -> Sequence[QueueStats]:
            try:
                return opened.sync.stats(list(queues) or None)
            except JobConfigError as error:
                raise usage_error(error) from error

        console = output_console()
        if watch_every is not None:
            document = (lambda: [stats_record(queue) for queue in take()]) if as_json else None
            watch(watch_every, lambda: stats_table(take()), document, console)
            return
        found = take()
    if as_json:
        write_json_list((stats_record(queue) for queue in found), sys.stdout)
    else:
        console.print(stats_table(found))
