"""Which queues a ``JobWorker`` claims from when it is not told (``queues=None``).

A store that is configured with its queues (``SqsJobStore.queue_urls``, in the order its
configuration names them) has every one of them served, as ``sqsjobs worker`` serves
them: a worker started without a list must not leave a configured queue's jobs waiting
forever. A store without such a list (``MemoryJobStore`` takes any queue name) serves
the producer's default queue, then each queue a handler declares for its jobs
(``@registry.handler(name, queue=...)``), so a producer built with the registry never
sends a job where the worker does not look.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from ..core.validation import check_queue_name
from ..handlers.registry import JobRegistry


def served_queues(
    store: object, default_queue: str, registry: JobRegistry, queues: Sequence[str] | None
) -> tuple[str, ...]:
    """``queues`` checked, or the queues a worker serves without a list (module docs)."""
    if queues:
        return tuple(check_queue_name(queue) for queue in queues)
    configured = getattr(store, "queue_urls", None)
    if isinstance(configured, Mapping) and configured:
        return tuple(configured)
    return _unique([default_queue, *_declared(registry)])


def _declared(registry: JobRegistry) -> Iterable[str]:
    for name in registry:
        queue = registry.defaults(name).queue
        if queue is not None:
            yield queue


def _unique(queues: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(queues))
