"""The process signals that end a worker gracefully: SIGTERM (ECS, Kubernetes) and SIGINT.

Handlers go on the event loop, so the callback runs on the loop's thread, and it is told
which signal came (the worker logs it: an operator reading why a worker stopped wants to
know whether the platform or a person stopped it). A loop that
cannot take them (not the main thread, or a platform without ``add_signal_handler``)
gets none: the worker still stops through ``stop()``.
"""

from __future__ import annotations

import asyncio
import signal
from collections.abc import Callable, Iterator
from contextlib import contextmanager

STOP_SIGNALS = (signal.SIGTERM, signal.SIGINT)


@contextmanager
def on_stop_signals(
    loop: asyncio.AbstractEventLoop, callback: Callable[[signal.Signals], None]
) -> Iterator[None]:
    """Call ``callback(signum)`` on SIGTERM or SIGINT while inside; the handlers go on leaving."""
    installed = []
    for signum in STOP_SIGNALS:
        try:
            loop.add_signal_handler(signum, callback, signum)
            installed.append(signum)
        except (NotImplementedError, RuntimeError, ValueError):
            pass  # not the main thread, or a loop without signal support
    try:
        yield
    finally:
        for signum in installed:
            loop.remove_signal_handler(signum)
