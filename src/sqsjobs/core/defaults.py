"""What a job's options are when nobody chose them: the library's defaults.

A producer writes them into a record when neither the enqueue, nor the job's handler
(given ``registry=``), nor the producer's own ``default_*`` arguments say otherwise. They
are declared here once, for the producers' signatures and for the worker, which warns
when a record holds them where the job's handler declares other values
(``worker.declared_options``): the sign of a producer that never saw the registry.
"""

from __future__ import annotations

DEFAULT_QUEUE = "default"
DEFAULT_MAX_ATTEMPTS = 5
DEFAULT_TIMEOUT = 30.0  # seconds one attempt may run
DEFAULT_LEASE = 30.0  # seconds a claim holds the job between heartbeats
