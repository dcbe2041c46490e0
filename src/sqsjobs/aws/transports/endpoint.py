"""Where and how a store's AWS clients connect, shared by the boto3 and aioboto3 transports.

Two policies share one shape. A worker is patient: botocore's 60-second connect timeout
and five attempts ride out a network blip without dropping a job. An operator's command
(``sqsjobs jobs list``, a dashboard) wants the opposite: an endpoint that cannot be
reached should be reported within seconds, so it passes ``connect_timeout`` and
``max_attempts`` (``SqsJobStore(..., connect_timeout=2, max_attempts=2)``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from ...core.validation import Span, integer, seconds

PATIENT_ATTEMPTS = 5  # botocore's standard mode: the first try and four retries
READ_TIMEOUT = 40.0  # leaves room for a 20-second long poll
CONNECT_TIMEOUT = Span(positive=True, maximum=READ_TIMEOUT, why="the read timeout")


class Endpoint(NamedTuple):
    """Where and how clients connect; ``None`` fields follow boto3's standard chain.

    ``connect_timeout`` (seconds) and ``max_attempts`` (tries per call, the first
    included): ``None`` keeps the patient defaults, botocore's 60 s and five attempts.
    Values from a caller go through ``checked`` (or ``of``), which refuses what botocore
    would misuse.
    """

    endpoint_url: str | None = None
    region_name: str | None = None
    connect_timeout: float | None = None
    max_attempts: int | None = None

    @classmethod
    def checked(
        cls,
        endpoint_url: str | None,
        region_name: str | None,
        connect_timeout: float | None = None,
        max_attempts: int | None = None,
    ) -> Endpoint:
        """An endpoint from a caller's values, refused when botocore would misuse them."""
        if connect_timeout is not None:
            seconds(connect_timeout, "connect_timeout", CONNECT_TIMEOUT, code=None)
        if max_attempts is not None:
            integer(max_attempts, "max_attempts", minimum=1, maximum=10, code=None)
        return cls(endpoint_url, region_name, connect_timeout, max_attempts)

    @classmethod
    def of(cls, arguments: Mapping[str, Any]) -> Endpoint:
        """The endpoint that a store's keyword ``arguments`` describe (others ignored)."""
        return cls.checked(
            arguments.get("endpoint_url"),
            arguments.get("region_name"),
            arguments.get("connect_timeout"),
            arguments.get("max_attempts"),
        )

    def client_options(self) -> dict[str, Any]:
        """botocore ``Config`` options shared by the boto3 and aioboto3 clients.

        Standard-mode retries handle throttling and transient errors for every call.
        """
        options: dict[str, Any] = {
            "retries": {"mode": "standard", "max_attempts": self.max_attempts or PATIENT_ATTEMPTS},
            "max_pool_connections": 64,
            "read_timeout": READ_TIMEOUT,
        }
        if self.connect_timeout is not None:
            options["connect_timeout"] = self.connect_timeout
        return options
