"""Test support: the local AWS emulator and what measures a store's requests on it.

For your own tests and the demo, not for production code. ``local_aws()`` runs the
emulator (``emulator``: moto, loaded only when it starts); ``RequestCounter`` counts the
requests it serves (``counter``); ``meter.BillingMeter`` meters the capacity units they
bill by DynamoDB's rules (``billing``); ``payloads`` builds payloads near a size limit.
``server`` is the emulator's HTTP server. Nothing here loads moto on import.
"""

from .counter import RequestCounter, RequestCounts
from .emulator import local_aws

__all__ = ["RequestCounter", "RequestCounts", "local_aws"]
