"""Which SQS message carries each claimed job, from claim until its outcome is recorded.

Heartbeat, complete, fail and release are called with ``(job_id, lease_token)``; the
message they must extend, delete or return is found here. The map is explicit state of
one store instance (a worker claims and records outcomes through the same store); the Lambda
handler fills it from the event records it was invoked with. An outcome for a claim
this map does not know still updates the record, and the message is judged again when
it comes back."""

from __future__ import annotations

import threading

from ..flows.claim import Delivery


class DeliveryMap:
    """``(job_id, lease_token) -> Delivery``, safe to share between threads."""

    def __init__(self) -> None:
        self._deliveries: dict[tuple[str, str], Delivery] = {}
        self._lock = threading.Lock()

    def add(self, delivery: Delivery) -> None:
        with self._lock:
            self._deliveries[delivery.key] = delivery

    def get(self, job_id: str, token: str) -> Delivery | None:
        with self._lock:
            return self._deliveries.get((job_id, token))

    def pop(self, job_id: str, token: str) -> Delivery | None:
        with self._lock:
            return self._deliveries.pop((job_id, token), None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._deliveries)
