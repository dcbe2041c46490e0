"""Pure tests: a retried write that is refused by its own first try counts as written.

botocore retries a request whose response was lost (a dropped connection, a 500 after
the write). If the lost try was applied, the retry of a conditional write is refused by
the record that try left behind. Each flow must recognise its own write there, on the
scripted fake, before the emulator tests (``test_faults``) show it end to end.
"""

from __future__ import annotations

from typing import Any

from sqsjobs import JobStatus
from sqsjobs.aws.flows import claim as _claim
from sqsjobs.aws.flows import put as _flows
from sqsjobs.aws.flows import settle as _settle
from sqsjobs.aws.flows.claim import Delivery
from sqsjobs.aws.wire import sqs as _sqs
from sqsjobs.aws.wire.index_keys import DEFAULT_SHARDS
from sqsjobs.aws.wire.items import item_from_job, number
from sqsjobs.aws.wire.protocol import Call, Reply, drive
from tests.aws.fakes import DLQ, NOW, FakeAws, layout, message, prepared, refused, stored

# -- put ----------------------------------------------------------------------------------


class PutAppliedThenLost(FakeAws):
    """Each conditional ``PutItem`` was applied, but only its retry's refusal arrives."""

    def __call__(self, call: Call) -> Reply:
        if call.operation == "put_item":
            self.script["put_item"] = [refused(call.params["Item"])]
        return super().__call__(call)


def test_a_put_refused_by_its_own_item_is_written_and_sent() -> None:
    job = prepared({"a": 1}).job
    aws = PutAppliedThenLost()
    result = drive(_flows.put(layout(), job, None, NOW), aws)
    assert (result.job, result.duplicate) == (job, False)
    assert aws.operations == ["put_item", "send_message"]


def test_a_keyed_put_refused_by_its_own_item_is_not_a_duplicate() -> None:
    made = prepared({"a": 1}, idempotency_key="k")
    aws = PutAppliedThenLost()
    result = drive(_flows.put(layout(), made.job, made.fingerprint, NOW), aws)
    assert (result.job, result.duplicate) == (_flows.placed(made.job), False)
    assert aws.operations == ["put_item", "send_message"]


def test_a_keyed_put_refused_by_another_put_of_the_same_instant_is_a_duplicate() -> None:
    """``enqueue_many`` gives repeated keys one ``created_at``: only ``put_id`` differs."""
    first = prepared({"a": 1}, idempotency_key="k")
    holder = _flows.placed(first.job)
    again = prepared({"a": 1}, idempotency_key="k")
    assert again.job.created_at == holder.created_at
    earlier = {
        **item_from_job(holder, first.fingerprint, DEFAULT_SHARDS),
        "put_id": {"S": "an earlier put"},
    }
    aws = FakeAws(put_item=[refused(earlier)])
    result = drive(_flows.put(layout(), again.job, again.fingerprint, NOW), aws)
    assert (result.job, result.duplicate) == (holder, True)
    assert aws.operations == ["put_item"]


def test_batch_puts_refused_by_themselves_are_written() -> None:
    jobs = [prepared(i).job for i in range(3)]
    aws = PutAppliedThenLost()
    results = drive(_flows.put_many(layout(), [(job, None) for job in jobs], NOW), aws)
    assert [(r.job.id, r.duplicate) for r in results] == [(job.id, False) for job in jobs]
    assert aws.operations == ["put_item", "put_item", "put_item", "send_message_batch"]


# -- claim --------------------------------------------------------------------------------


class ClaimAppliedThenLost:
    """A table where each claim write was applied, but only its retry's answer arrives."""

    def __init__(self, *, own_token: bool) -> None:
        self.job = prepared().job
        self.own_token = own_token
        self.calls: list[Call] = []

    def __call__(self, call: Call) -> Reply:
        self.calls.append(call)
        if call.operation != "update_item":
            return {}
        written = call.params["ExpressionAttributeValues"][":token"]["S"]
        token = written if self.own_token else "another claim's token"
        now = self.job.created_at.timestamp()
        item = stored(self.job, status=JobStatus.RUNNING, attempts=1, lease_token=token)
        item["lease_until"] = number(now + 30)
        raise refused(item)


def claim(aws: Any) -> _claim.Claimed:
    body = _sqs.body(aws.job.id, "default")
    flow = _claim.claim_received(layout(), "default", [message(body)], "w", NOW)
    return drive(flow, aws)


def test_a_claim_refused_under_its_own_token_is_claimed() -> None:
    aws = ClaimAppliedThenLost(own_token=True)
    claimed = claim(aws)
    [delivery] = claimed.deliveries
    written = aws.calls[0].params["ExpressionAttributeValues"][":token"]["S"]
    assert (delivery.job.id, delivery.job.lease_token, delivery.job.attempts) == (
        aws.job.id,
        written,
        1,
    )
    assert [c.operation for c in aws.calls] == ["update_item"]


def test_a_claim_refused_under_another_token_is_a_duplicate_delivery() -> None:
    aws = ClaimAppliedThenLost(own_token=False)
    claimed = claim(aws)
    assert claimed.deliveries == []
    assert [c.operation for c in aws.calls] == ["update_item", "change_message_visibility_batch"]


# -- after a claim ------------------------------------------------------------------------


def settled(status: JobStatus, updated_at: float) -> dict[str, Any]:
    """The record as our own write (or someone else's at ``updated_at``) left it."""
    item = stored(prepared().job, status=status)
    item["updated_at"] = number(updated_at)
    return item


def test_a_complete_refused_by_itself_is_complete() -> None:
    own = FakeAws(update_item=[refused(settled(JobStatus.COMPLETED, NOW))])
    assert drive(_settle.complete(layout(), "j", "t", NOW, None, _delivery().job), own) is True
    other = FakeAws(update_item=[refused(settled(JobStatus.COMPLETED, NOW - 1))])
    assert drive(_settle.complete(layout(), "j", "t", NOW, None, _delivery().job), other) is False


def test_updated_at_is_compared_by_value_as_dynamodb_returns_numbers() -> None:
    round_now = 1_800_000_000.0
    item = settled(JobStatus.COMPLETED, round_now)
    assert item["updated_at"] == {"N": "1800000000.0"}
    item["updated_at"] = {"N": "1800000000"}  # DynamoDB normalises numbers
    aws = FakeAws(update_item=[refused(item)])
    assert (
        drive(_settle.complete(layout(), "j", "t", round_now, None, _delivery().job), aws) is True
    )


def test_a_retry_refused_by_itself_still_returns_the_message() -> None:
    delivery = _delivery()
    aws = FakeAws(update_item=[refused(settled(JobStatus.DELAYED, NOW))])
    assert drive(_settle.fail(layout(), delivery, "j", "t", "E: x", NOW + 4.2, NOW), aws)
    assert aws.operations == ["update_item", "change_message_visibility_batch"]


def test_a_dead_letter_refused_by_itself_still_copies_the_message_to_the_dlq() -> None:
    delivery = _delivery(max_attempts=1)
    aws = FakeAws(
        update_item=[refused(settled(JobStatus.DEAD, NOW))],
        send_message_batch=[{"Successful": [{"Id": "0"}]}],
    )
    assert drive(_settle.fail(layout(), delivery, "j", "t", "E", None, NOW), aws)
    # The copy, the original's delete, then the copy confirmed on the record.
    assert aws.operations == [
        "update_item",
        "send_message_batch",
        "delete_message_batch",
        "update_item",
    ]
    assert aws.calls[1].params["QueueUrl"] == DLQ
    assert aws.calls[3].params["ExpressionAttributeValues"][":due"] == {"N": repr(NOW)}


def test_a_release_refused_by_itself_still_makes_the_message_visible() -> None:
    aws = FakeAws(update_item=[refused(settled(JobStatus.QUEUED, NOW))])
    assert drive(_settle.release(layout(), _delivery(), "j", "t", "stop", NOW), aws)
    assert aws.operations == ["update_item", "change_message_visibility_batch"]


def _delivery(max_attempts: int = 3) -> Delivery:
    job = prepared(max_attempts=max_attempts).job.model_copy(
        update={"status": JobStatus.RUNNING, "attempts": 1, "lease_token": "t"}
    )
    return Delivery(job, message(_sqs.body(job.id, "default")))
