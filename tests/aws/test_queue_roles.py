"""A work queue must not be a dead-letter queue: the store refuses the mix-up up front.

Copying the wrong URL into ``SQSJOBS_QUEUES`` would have workers run every dead job
again, and redrives send jobs back where they died.
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from sqsjobs import JobConfigError
from sqsjobs.aws import SqsJobStore


def test_a_url_given_as_both_work_queue_and_dead_letter_queue_is_refused() -> None:
    with pytest.raises(ValueError, match=r"queue_urls\['high'\].*dead-letter queue"):
        SqsJobStore(
            table_name="jobs",
            queue_urls={"default": "https://sqs.eu-west-1/1/jobs", "high": "https://q/dlq"},
            dead_letter_queue_urls={"default": "https://q/dlq"},
        )


async def test_a_queue_that_is_another_queue_s_dead_letter_queue_is_refused(
    store: SqsJobStore, aws_endpoint: str, sqs: Any
) -> None:
    """Found from SQS itself (ListDeadLetterSourceQueues), before the first claim."""
    dead_letter_url = store.dead_letter_queue_urls["default"]
    mixed_up = SqsJobStore(
        table_name=store.table_name,
        queue_urls={"default": dead_letter_url},
        endpoint_url=aws_endpoint,
    )
    try:
        with pytest.raises(JobConfigError, match="is the dead-letter queue of") as refused:
            await mixed_up.claim("default", "w", time.time())
        assert refused.value.code == "invalid_option"
        with pytest.raises(JobConfigError, match="is the dead-letter queue of"):
            mixed_up.sync.stats()
    finally:
        await mixed_up.aclose()
