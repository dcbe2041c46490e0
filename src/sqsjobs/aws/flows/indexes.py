"""What listing, stats and the reconciler share: which list indexes a table has, and
fetching the records an index page points at.

``by_queue`` (``wire.index_keys``) projects neither status nor payload, so its readers fetch
records: eventually consistent ``BatchGetItem``s of up to 100 keys, sent together, each
asked again for the keys DynamoDB left unprocessed. A table created by a release before
``by_queue`` also has ``by_status``, holding that release's records until their
retention ends; ``has_previous_index`` finds out once per store (one ``Query`` of one
item; a table without the index refuses it) so the readers know whether to query it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from ..wire import index_reads
from ..wire.index_reads import FIRST_KEY, LAST_KEY, PREVIOUS
from ..wire.items import Stored, job_key, stored_from_item
from ..wire.protocol import AwsError, Flow
from .batch_get import get_items
from .bodies import read_bodies

# A Query naming an index the table lacks: ValidationException on AWS ("The table does
# not have the specified index"), ResourceNotFoundException on the emulator ("Invalid
# index").
MISSING_INDEX = frozenset({"ValidationException", "ResourceNotFoundException"})


def has_previous_index(table: str) -> Flow[bool]:
    """Whether ``table`` has the previous layout's ``by_status`` index."""
    probe = index_reads.query_index(
        table, PREVIOUS, "queued#0", FIRST_KEY, LAST_KEY, limit=1, start=None
    )
    try:
        yield probe
    except AwsError as refused:
        if refused.code in MISSING_INDEX and "index" in str(refused).lower():
            return False
        raise
    return True


def job_id_of(item: Mapping[str, Any]) -> str:
    """The id in an index item's table key (``pk = "job#{id}"``)."""
    return str(item["pk"]["S"]).removeprefix("job#")


def records(
    table: str, job_ids: Iterable[str], *, payloads: bool = True
) -> Flow[dict[str, Stored]]:
    """The records of ``job_ids`` that exist (expired ones included: callers judge that),
    with the payloads kept in body items read too unless ``payloads`` is false."""
    wanted = list(dict.fromkeys(job_ids))
    items = yield from get_items(table, [job_key(job_id) for job_id in wanted])
    found = [stored_from_item(item) for item in items]
    if payloads:
        found = yield from read_bodies(table, found)
    return {stored.job.id: stored for stored in found}
