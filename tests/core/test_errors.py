"""One error root: every public error is a ``JobError``, and only its subclasses are raised."""

from __future__ import annotations

import pytest

import sqsjobs
from sqsjobs import (
    EnqueueResult,
    Job,
    JobBatchError,
    JobConfigError,
    JobError,
    JobFatalError,
    JobIdempotencyConflictError,
    JobStoreError,
    JobStoreThrottledError,
    JobTimeoutError,
    JobTransactionError,
)
from sqsjobs.infra import StackDeployError

EXAMPLES: list[JobError] = [
    JobConfigError("invalid_option", "Invalid lease -1.5: must be > 0"),
    JobIdempotencyConflictError("order/ünïcode-42", "6f1c0d3a9b2e4f5a8c7d1e2f3a4b5c6d"),
    JobFatalError("card declined for tenant acme-eu"),
    JobTimeoutError(29.8731),
    JobBatchError([], "Batch stopped at request 3: store full"),
    JobTransactionError([{"Code": "TransactionConflict", "Message": "Transaction is ongoing"}], 1),
    StackDeployError("jobs-prod", "ROLLBACK_COMPLETE", "CloudFormation rolled back"),
    JobStoreError("PutItem", "ValidationException", "Item size too large", retryable=False),
    JobStoreThrottledError("UpdateItem", "ThrottlingException", "Rate exceeded", retryable=True),
]


@pytest.mark.parametrize("error", EXAMPLES, ids=lambda error: type(error).__name__)
def test_every_public_error_is_caught_by_the_root(error: JobError) -> None:
    with pytest.raises(JobError) as caught:
        raise error
    assert caught.value is error


def test_every_error_class_the_package_root_exports_is_a_job_error() -> None:
    errors = [
        value
        for value in (getattr(sqsjobs, name) for name in sqsjobs.__all__)
        if isinstance(value, type) and issubclass(value, BaseException)
    ]
    assert {error.__name__ for error in errors} == {
        "JobBatchError",
        "JobConfigError",
        "JobError",
        "JobFatalError",
        "JobIdempotencyConflictError",
        "JobStoreError",
        "JobStoreThrottledError",
        "JobTimeoutError",
        "JobTransactionError",
    }
    assert all(issubclass(error, JobError) for error in errors)


def test_errors_keep_the_bases_the_spec_gives_them() -> None:
    assert issubclass(JobConfigError, ValueError)
    assert issubclass(StackDeployError, RuntimeError)
    with pytest.raises(ValueError):
        raise JobConfigError("invalid_name", "Invalid job name '9lives'")


def test_the_root_itself_cannot_be_raised() -> None:
    with pytest.raises(TypeError, match="JobError is abstract"):
        JobError("something went wrong")


def test_a_subclass_of_the_root_keeps_its_message_and_fields() -> None:
    error = JobIdempotencyConflictError("cron/digest/2026-03-01T09:00:00Z", "c0ffee")
    assert (error.key, error.existing_job_id, error.code) == (
        "cron/digest/2026-03-01T09:00:00Z",
        "c0ffee",
        "idempotency_conflict",
    )
    assert "already bound to job 'c0ffee'" in str(error)
    batch = JobBatchError([EnqueueResult(Job.model_construct(id="j1"), duplicate=False)], "stop")
    assert (str(batch), len(batch.results)) == ("stop", 1)


def test_a_cancelled_transaction_names_each_failed_entry_and_whether_to_retry() -> None:
    reasons = [
        {"Code": "None"},
        {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"},
        {"Code": "None"},
        {"Code": "TransactionConflict", "Message": "Transaction is ongoing for the item"},
    ]
    error = JobTransactionError(reasons, 2)
    assert error.item_reasons == tuple(reasons[:2]) and error.code == "transaction_cancelled"
    assert str(error) == (
        "Transaction cancelled, nothing was written: item 1: ConditionalCheckFailed (The "
        "conditional request failed); job 1: TransactionConflict (Transaction is ongoing "
        "for the item)"
    )
    assert not error.retryable  # a condition failed: the same call fails again
    assert JobTransactionError([{"Code": "None"}, reasons[3]], 1).retryable
