"""The checks of the store's settings, and the parsers of their text forms.

``config.StoreSettings`` declares each setting once and names its check here; the
parsers read what ``from_env`` and ``from_stack`` find as text (an environment variable,
a stack output). Every refusal is a ``ValueError`` that names the setting and what it
allows.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from ...core.validation import check_queue_name, integer
from ..wire.index_keys import MAX_SHARDS
from ..wire.items import RECORD_FORMATS
from ..wire.layout import Lanes

LANES_FORMAT = "'default@1=URL,reports@1=URL' (queue@lowest priority=URL)"


def checked_table(value: object, what: str = "table_name") -> str:
    if not isinstance(value, str) or not value:
        raise ValueError(f"{what} must be a non-empty str, got {value!r}")
    return value


def checked_urls(value: object, what: str) -> dict[str, str]:
    """A copy of ``value``, a mapping of queue name to SQS queue URL."""
    if not isinstance(value, Mapping):
        raise ValueError(f"{what} must be a mapping of queue name to SQS queue URL")
    for queue, url in value.items():
        check_queue_name(queue)
        if not isinstance(url, str) or not url:
            raise ValueError(f"{what}[{queue!r}] must be a queue URL, got {url!r}")
    return dict(value)


def checked_queues(value: object, what: str = "queue_urls") -> dict[str, str]:
    """The work queues' URLs: at least one."""
    urls = checked_urls(value, what)
    if not urls:
        raise ValueError(f"{what} must name at least one queue: {{'default': URL}}")
    return urls


def checked_dead_letters(
    value: object, what: str = "dead_letter_queue_urls"
) -> dict[str, str] | None:
    """The DLQs' URLs (copied), or ``None``: learned from each queue's redrive policy."""
    return None if value is None else checked_urls(value or {}, what)


def checked_shards(value: object, what: str = "index_shards") -> int:
    """The list index's partitions per status: at least one, and few enough that a stats
    call (4 x shards queries per queue) stays cheap; more throughput means more tables."""
    return integer(
        value,
        what,
        minimum=1,
        maximum=MAX_SHARDS,
        why=(
            "a stats call makes 4 x index_shards queries per queue; see docs/explanation/scaling.md"
        ),
        code=None,
    )


def checked_format(value: object, what: str = "record_format") -> int:
    """The record format new jobs are written in: one every reader of the deployment reads.

    1 while any producer, worker, Lambda function or reconciler of a 0.1 release still
    runs beside this one; 2 while one of 0.2 does; 3 once all of them run 0.3 or later
    (CHANGELOG.md, "Upgrading").
    """
    if isinstance(value, bool) or value not in RECORD_FORMATS:
        allowed = ", ".join(str(f) for f in RECORD_FORMATS[:-1]) + f" or {RECORD_FORMATS[-1]}"
        raise ValueError(
            f"{what} must be {allowed}, got {value!r}: 1 while readers of sqsjobs "
            "0.1 still run (a rolling upgrade), 2 while readers of 0.2 do, 3 once every "
            "reader runs 0.3 or later"
        )
    return int(value)


def refuse_dead_letter_queues(
    queue_urls: Mapping[str, str], dead_letter_urls: Iterable[str]
) -> None:
    """A work queue that is some queue's DLQ would run every dead job again: refuse it."""
    dead = set(dead_letter_urls)
    for queue, url in sorted(queue_urls.items()):
        if url in dead:
            raise ValueError(
                f"queue_urls[{queue!r}] = {url!r} is a dead-letter queue of this store; "
                "work queues and their dead-letter queues must be distinct queues"
            )


def checked_lanes(
    value: Mapping[str, Mapping[int, str]],
    queue_urls: Mapping[str, str],
    dead_letter_urls: Iterable[str],
) -> dict[str, Lanes]:
    """Each queue's lanes, highest band first; a lane must be a queue of its own."""
    if not isinstance(value, Mapping):
        raise ValueError("priority_lanes must map a queue name to {lowest priority: URL}")
    taken = {*queue_urls.values(), *dead_letter_urls}
    lanes: dict[str, Lanes] = {}
    for queue, bands in value.items():
        if queue not in queue_urls:
            known = ", ".join(sorted(queue_urls))
            raise ValueError(f"priority_lanes names queue {queue!r}, not one of {known}")
        if queue_urls[queue].endswith(".fifo"):
            raise ValueError(
                f"Queue {queue!r} is a FIFO queue: its order is its groups', it takes no "
                "priority lanes"
            )
        if not isinstance(bands, Mapping) or not bands:
            raise ValueError(f"priority_lanes[{queue!r}] must map lowest priorities to URLs")
        for lowest, url in bands.items():
            integer(lowest, f"priority_lanes[{queue!r}] lowest priority", minimum=1, code=None)
            if not isinstance(url, str) or not url or url in taken:
                raise ValueError(
                    f"priority_lanes[{queue!r}][{lowest}] must be the URL of a queue of its "
                    f"own (not a job queue or a dead-letter queue), got {url!r}"
                )
            taken.add(url)
        lanes[queue] = tuple(sorted(bands.items(), reverse=True))
    return lanes


# -- text, as the environment and stack outputs give it ---------------------------------


def parse_text(text: str, what: str) -> str:
    """A name read as text (the table's) is that text."""
    return text


def parse_urls(text: str, what: str) -> dict[str, str]:
    """``"default=URL,high=URL"`` as a mapping; an error names ``what`` and the format."""
    urls: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        queue, sep, url = part.partition("=")
        if not sep or not queue.strip() or not url.strip():
            raise ValueError(f"{what} must look like 'default=URL,high=URL', got {text!r}")
        urls[queue.strip()] = url.strip()
    return urls


def parse_lanes(text: str, what: str) -> dict[str, dict[int, str]]:
    """``"default@1=URL"`` as ``{"default": {1: URL}}``; an error names the format."""
    lanes: dict[str, dict[int, str]] = {}
    for queue_band, url in parse_urls(text, what).items():
        queue, sep, lowest = queue_band.rpartition("@")
        if not sep or not queue or not lowest.lstrip("-").isdigit():
            raise ValueError(f"{what} must look like {LANES_FORMAT}, got {text!r}")
        lanes.setdefault(queue, {})[int(lowest)] = url
    return lanes


def parse_format(text: str, what: str) -> int:
    """A record format read as text (an environment variable or a stack output)."""
    return checked_format(int(text) if text.strip().isdigit() else text)


def parse_shards(text: str, what: str) -> int:
    """A shard count read as text (an environment variable or a stack output)."""
    if not (text.strip().isascii() and text.strip().isdigit()):
        raise ValueError(f"{what} must be a whole number from 1 to {MAX_SHARDS}, got {text!r}")
    return checked_shards(int(text))
