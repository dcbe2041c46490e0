"""Where and how a store's AWS clients connect, shared by the boto3 and aioboto3 transports."""

from __future__ import annotations

from typing import Any, NamedTuple


class Endpoint(NamedTuple):
    """Where and how clients connect; ``None`` fields follow boto3's standard chain."""

    endpoint_url: str | None = None
    region_name: str | None = None

    def client_options(self) -> dict[str, Any]:
        """botocore ``Config`` options shared by the boto3 and aioboto3 clients.

        Standard-mode retries handle throttling and transient errors for every call; the
        read timeout leaves room for a 20-second long poll.
        """
        return {
            "retries": {"mode": "standard", "max_attempts": 5},
            "max_pool_connections": 64,
            "read_timeout": 40,
        }
