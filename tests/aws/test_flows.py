"""Pure tests of the flows: the sequence of AWS operations each makes, on a scripted fake."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from sqsjobs import JobBatchError, JobIdempotencyConflictError, JobStatus, JobStoreError
from sqsjobs.aws.flows import claim as _claim
from sqsjobs.aws.flows import put as _flows
from sqsjobs.aws.flows import settle as _settle
from sqsjobs.aws.flows.claim import Delivery
from sqsjobs.aws.wire import sqs as _sqs
from sqsjobs.aws.wire.index_keys import DEFAULT_SHARDS, shard
from sqsjobs.aws.wire.items import item_from_job, keyed_id, stored_from_item
from sqsjobs.aws.wire.protocol import Call, Parallel, adrive, drive
from sqsjobs.core.lifecycle import LEASE_EXPIRED_ERROR

from .fakes import DLQ, NOW, URL, FakeAws, failure, layout, message, prepared, refused, stored


def at(epoch: float) -> datetime:
    return datetime.fromtimestamp(epoch, UTC)


# -- put ----------------------------------------------------------------------------------


def test_put_is_one_conditional_write_then_one_send() -> None:
    job = prepared({"a": 1}).job
    aws = FakeAws()
    result = drive(_flows.put(layout(), job, None, NOW), aws)
    assert aws.operations == ["put_item", "send_message"]
    assert not result.duplicate and result.job == job
    assert aws.calls[0].params["ConditionExpression"]
    # The body names the job and nothing a claim would trust: the lease is the record's.
    assert json.loads(aws.calls[1].params["MessageBody"]) == {
        "v": 2,
        "id": job.id,
        "queue": "default",
    }


def test_put_of_a_keyed_job_takes_the_id_its_queue_tenant_and_key_determine() -> None:
    for tenant in (None, "acme"):
        made = prepared(idempotency_key="k", tenant=tenant)
        result = drive(_flows.put(layout(), made.job, made.fingerprint, NOW), FakeAws())
        assert result.job.id == keyed_id("default", tenant, "k") != made.job.id


def test_a_refused_put_returns_the_holder_without_a_read_or_a_send() -> None:
    first = prepared({"a": 1}, idempotency_key="k")
    holder = _flows.placed(first.job)
    aws = FakeAws(put_item=[refused(stored(holder, first.fingerprint))])
    again = prepared({"a": 1}, idempotency_key="k")
    result = drive(_flows.put(layout(), again.job, again.fingerprint, NOW), aws)
    assert aws.operations == ["put_item"]
    assert result.duplicate and result.job == holder


def test_a_refused_put_with_another_fingerprint_conflicts() -> None:
    first = prepared({"a": 1}, idempotency_key="k")
    holder = _flows.placed(first.job)
    aws = FakeAws(put_item=[refused(stored(holder, first.fingerprint))])
    other = prepared({"a": 2}, idempotency_key="k")
    with pytest.raises(JobIdempotencyConflictError) as caught:
        drive(_flows.put(layout(), other.job, other.fingerprint, NOW), aws)
    assert caught.value.existing_job_id == holder.id
    assert aws.operations == ["put_item"]


def test_a_delay_past_fifteen_minutes_sends_with_the_longest_sqs_delay() -> None:
    job = prepared(delay=86_400).job
    aws = FakeAws()
    drive(_flows.put(layout(), job, None, NOW), aws)
    assert aws.calls[1].params["DelaySeconds"] == 900


# -- put_many -----------------------------------------------------------------------------


def test_put_many_writes_and_sends_ten_at_a_time() -> None:
    items = [(prepared(i).job, None) for i in range(12)]
    aws = FakeAws()
    results = drive(_flows.put_many(layout(), items, NOW), aws)
    assert aws.operations == [
        *["put_item"] * 10,
        "send_message_batch",
        *["put_item"] * 2,
        "send_message_batch",
    ]
    puts = [call.params for call in aws.calls if call.operation == "put_item"]
    # The conditional put of a single enqueue: it never overwrites a record.
    assert {p["ConditionExpression"] for p in puts} == {
        "attribute_not_exists(#pk) OR attribute_not_exists(#status) OR #expires_at <= :now"
    }
    assert {p["ReturnValuesOnConditionCheckFailure"] for p in puts} == {"ALL_OLD"}
    assert [stored_from_item(p["Item"]).job.payload for p in puts] == list(range(12))
    assert [r.job.payload for r in results] == list(range(12))


def test_put_many_sends_the_puts_of_jobs_without_keys_together() -> None:
    keyed = prepared("k", idempotency_key="k")
    items = [(prepared(i).job, None) for i in range(3)] + [(keyed.job, keyed.fingerprint)]
    items += [(prepared(i).job, None) for i in range(3, 5)]
    flow = _flows.put_many(layout(), items, NOW)
    first = next(flow)
    assert isinstance(first, Parallel)
    assert [stored_from_item(c.params["Item"]).job.payload for c in first.calls] == [0, 1, 2]
    keyed_put = flow.send([{}, {}, {}])  # the keyed job waits for every write before it
    assert isinstance(keyed_put, Call)
    assert stored_from_item(keyed_put.params["Item"]).job.id == _flows.placed(keyed.job).id
    last = flow.send({})
    assert isinstance(last, Parallel)
    assert [stored_from_item(c.params["Item"]).job.payload for c in last.calls] == [3, 4]


def test_put_many_stops_at_an_aws_error_with_what_was_written() -> None:
    items = [(prepared(i).job, None) for i in range(25)]
    error = failure()
    aws = FakeAws(send_message_batch=[{}, error])
    with pytest.raises(JobBatchError) as caught:
        drive(_flows.put_many(layout(), items, NOW), aws)
    # The second group's records were written (the reconciler sends their messages);
    # the third group was never written.
    assert [r.job.payload for r in caught.value.results] == list(range(20))
    assert store_error_of(caught.value).__cause__ is error.cause
    assert aws.operations.count("put_item") == 20


def test_a_failed_put_reports_those_before_it_and_sends_every_written_job() -> None:
    items = [(prepared(i).job, None) for i in range(5)]
    error = failure("InternalServerError")
    aws = FakeAws(put_item=[{}, {}, error, {}, {}])
    with pytest.raises(JobBatchError) as caught:
        drive(_flows.put_many(layout(), items, NOW), aws)
    assert [r.job.payload for r in caught.value.results] == [0, 1]
    assert store_error_of(caught.value).__cause__ is error.cause
    assert "Batch stopped at request 2" in str(caught.value)
    assert "2 later request(s) sent with it were written and will run" in str(caught.value)
    # Requests 3 and 4 went out with 2 and were written: their jobs get messages too.
    assert aws.operations == [*["put_item"] * 5, "send_message_batch"]
    sent = [json.loads(e["MessageBody"])["id"] for e in aws.calls[-1].params["Entries"]]
    assert sent == [items[i][0].id for i in (0, 1, 3, 4)]


def test_written_jobs_whose_send_fails_after_a_failed_put_are_left_to_the_reconciler() -> None:
    items = [(prepared(i).job, None) for i in range(3)]
    error = failure("InternalServerError")
    aws = FakeAws(put_item=[error, {}, {}], send_message_batch=[failure()])
    with pytest.raises(JobBatchError) as caught:
        drive(_flows.put_many(layout(), items, NOW), aws)
    assert caught.value.results == []
    assert store_error_of(caught.value).__cause__ is error.cause  # the put's error, not the send's
    assert aws.operations == [*["put_item"] * 3, "send_message_batch"]


def test_a_put_refused_by_a_record_it_did_not_write_stops_the_batch() -> None:
    items = [(prepared(i).job, None) for i in range(3)]
    taken = refused(
        {**item_from_job(items[1][0], None, DEFAULT_SHARDS), "put_id": {"S": "an earlier put"}}
    )
    aws = FakeAws(put_item=[{}, taken, {}])
    with pytest.raises(JobBatchError) as caught:
        drive(_flows.put_many(layout(), items, NOW), aws)
    assert [r.job.payload for r in caught.value.results] == [0]
    assert store_error_of(caught.value).__cause__ is taken.cause


def test_put_many_sends_what_it_wrote_before_a_conflict() -> None:
    keyed = prepared("x", idempotency_key="k")
    holder = _flows.placed(prepared("other", idempotency_key="k").job)
    items = [(prepared("a").job, None), (keyed.job, keyed.fingerprint)]
    aws = FakeAws(put_item=[{}, refused(stored(holder, "another fingerprint"))])
    with pytest.raises(JobBatchError) as caught:
        drive(_flows.put_many(layout(), items, NOW), aws)
    assert [r.job.payload for r in caught.value.results] == ["a"]
    assert isinstance(caught.value.__cause__, JobIdempotencyConflictError)
    assert aws.operations == ["put_item", "put_item", "send_message_batch"]


# -- claim --------------------------------------------------------------------------------


def _claim_flow(
    aws: FakeAws, body: str, receive_count: int = 1, now: float = NOW
) -> _claim.Claimed:
    flow = _claim.claim_received(layout(), "default", [message(body, receive_count)], "w", now)
    return drive(flow, aws)


def test_a_claim_is_one_update_and_no_sqs_call() -> None:
    job = prepared().job
    running = stored(job, status=JobStatus.RUNNING, attempts=1, lease_token="t")
    aws = FakeAws(update_item=[{"Attributes": running}])
    claimed = _claim_flow(aws, _sqs.body(job.id, "default"))
    assert aws.operations == ["update_item"]
    assert [d.job.id for d in claimed.deliveries] == [job.id]


@pytest.mark.parametrize("status", [JobStatus.COMPLETED, JobStatus.DEAD, JobStatus.CANCELLED])
def test_a_message_for_a_terminal_record_is_deleted_without_a_run(status: JobStatus) -> None:
    job = prepared().job
    aws = FakeAws(update_item=[refused(stored(job, status=status))])
    claimed = _claim_flow(aws, _sqs.body(job.id, "default"))
    assert aws.operations == ["update_item", "delete_message_batch"]
    assert claimed.deliveries == []


def test_a_message_for_a_missing_or_expired_record_is_deleted() -> None:
    job = prepared().job
    expired = stored(job, status=JobStatus.COMPLETED, expires_at=NOW - 1)
    for item in (None, expired):
        aws = FakeAws(update_item=[refused(item)])
        _claim_flow(aws, _sqs.body(job.id, "default"))
        assert aws.operations == ["update_item", "delete_message_batch"]


def test_a_duplicate_for_a_live_lease_is_hidden_until_the_lease_ends() -> None:
    job = prepared().job
    item = stored(
        job, status=JobStatus.RUNNING, attempts=1, lease_token="t", lease_until=at(NOW + 12.5)
    )
    aws = FakeAws(update_item=[refused(item)])
    _claim_flow(aws, _sqs.body(job.id, "default"))
    assert aws.operations == ["update_item", "change_message_visibility_batch"]
    # 12.5 s of lease, then the 2 s by which a claimer's clock may run ahead: 15 s.
    assert aws.calls[1].params["Entries"][0]["VisibilityTimeout"] == 15


def test_a_lease_ended_on_the_final_attempt_is_dead_lettered_and_sent_to_the_dlq() -> None:
    job = prepared(max_attempts=1).job
    item = stored(
        job, status=JobStatus.RUNNING, attempts=1, lease_token="t", lease_until=at(NOW - 2.1)
    )  # over, even for a clock 2 s behind
    dead = stored(job, status=JobStatus.DEAD, attempts=1, last_error=LEASE_EXPIRED_ERROR)
    aws = FakeAws(
        update_item=[refused(item), {"Attributes": dead}],
        send_message_batch=[{"Successful": [{"Id": "0"}]}],
    )
    claimed = _claim_flow(aws, _sqs.body(job.id, "default"))
    # Dead (its index entry kept open: a copy is owed), the copy, then the copy confirmed.
    assert aws.operations == [
        "update_item",
        "update_item",
        "send_message_batch",
        "delete_message_batch",
        "update_item",
    ]
    assert aws.calls[1].params["ExpressionAttributeValues"][":phase"] == {"S": "open"}
    assert ":list_pk" not in aws.calls[1].params["ExpressionAttributeValues"]
    assert aws.calls[2].params["QueueUrl"] == DLQ
    confirmed = aws.calls[4].params
    assert (
        confirmed["UpdateExpression"] == "SET #phase = :phase, #list_pk = :list_pk REMOVE #copy_due"
    )
    assert confirmed["ExpressionAttributeValues"][":list_pk"]["S"].endswith("#dead")
    assert [j.status for j in claimed.dead] == [JobStatus.DEAD]


def test_a_message_not_yet_due_hops_without_spending_an_attempt() -> None:
    job = prepared(delay=7_200).job
    aws = FakeAws(update_item=[refused(stored(job))])
    claimed = _claim_flow(aws, _sqs.body(job.id, "default"), now=NOW + 900)
    assert aws.operations == ["update_item", "change_message_visibility_batch"]
    assert aws.calls[1].params["Entries"][0]["VisibilityTimeout"] == 6_300
    assert claimed.deliveries == []


def test_a_hop_near_the_redrive_limit_re_sends_a_fresh_message() -> None:
    job = prepared(delay=7_200).job
    aws = FakeAws(
        update_item=[refused(stored(job))], send_message_batch=[{"Successful": [{"Id": "0"}]}]
    )
    _claim_flow(aws, _sqs.body(job.id, "default"), receive_count=3, now=NOW + 900)
    assert aws.operations == ["update_item", "send_message_batch", "delete_message_batch"]
    assert aws.calls[1].params["Entries"][0]["DelaySeconds"] == 900


@pytest.mark.parametrize(
    "body",
    [
        "not json",
        json.dumps({"id": "x", "queue": "default"}),
        json.dumps({"v": 1, "id": 7, "queue": "default", "lease": 30}),
        json.dumps({"v": 2, "id": "x", "queue": "default", "lease": 30}),
        json.dumps({"v": 1, "id": "x", "queue": "default"}),
        json.dumps({"v": 3, "id": "x", "queue": "default"}),
        json.dumps({"v": True, "id": "x", "queue": "default", "lease": 30}),
        json.dumps({"v": 1, "id": "x" * 2000, "queue": "default", "lease": 30}),
        json.dumps({"v": 1, "id": "x", "queue": "other", "lease": 30}),
    ],
)
def test_a_malformed_message_goes_to_the_dlq_without_touching_the_table(body: str) -> None:
    aws = FakeAws(send_message_batch=[{"Successful": [{"Id": "0"}]}])
    claimed = _claim_flow(aws, body)
    assert aws.operations == ["send_message_batch", "delete_message_batch"]
    assert aws.calls[0].params["QueueUrl"] == DLQ
    assert aws.calls[0].params["Entries"][0]["MessageBody"] == body
    assert len(claimed.malformed) == 1


def test_a_malformed_message_is_not_deleted_if_its_dlq_copy_failed() -> None:
    aws = FakeAws(send_message_batch=[failure()])
    _claim_flow(aws, "not json")
    assert aws.operations == ["send_message_batch"]


# -- after a claim ------------------------------------------------------------------------


def _delivery(max_attempts: int = 3, receive_count: int = 1) -> Delivery:
    job = prepared(max_attempts=max_attempts).job.model_copy(
        update={"status": JobStatus.RUNNING, "attempts": 1, "lease_token": "t"}
    )
    return Delivery(job, message(_sqs.body(job.id, "default"), receive_count))


def test_complete_is_one_update_that_moves_the_entry_to_the_completed_partition() -> None:
    aws = FakeAws()
    assert drive(_settle.complete(layout(), "j", "t", NOW, '{"ok":1}', _delivery().job), aws)
    assert aws.operations == ["update_item"]
    moved = aws.calls[0].params["ExpressionAttributeValues"][":list_pk"]["S"]
    assert moved == f"default#{shard_of('j')}#completed"


def test_a_complete_by_a_store_that_did_not_claim_reads_the_job_s_queue_first() -> None:
    job = prepared().job
    held = stored(
        job, status=JobStatus.RUNNING, attempts=1, lease_token="t", lease_until=at(NOW + 30)
    )
    aws = FakeAws(get_item=[{"Item": held}])
    assert drive(_settle.complete(layout(), job.id, "t", NOW, None), aws)
    assert aws.operations == ["get_item", "update_item"]
    moved = aws.calls[1].params["ExpressionAttributeValues"][":list_pk"]["S"]
    assert moved == f"default#{shard_of(job.id)}#completed"


def test_complete_under_record_format_2_ends_the_entry_in_place() -> None:
    aws = FakeAws()
    two = layout()._replace(record_format=2)
    assert drive(_settle.complete(two, "j", "t", NOW, None, _delivery().job), aws)
    assert aws.operations == ["update_item"]
    assert ":list_pk" not in aws.calls[0].params["ExpressionAttributeValues"]


def test_a_refused_settle_never_touches_the_message() -> None:
    delivery = _delivery()
    flows = [
        _settle.complete(layout(), "j", "t", NOW, None, _delivery().job),
        _settle.heartbeat(layout(), delivery, "j", "t", NOW + 30, NOW),
        _settle.fail(layout(), delivery, "j", "t", "E: x", NOW + 5, NOW),
        _settle.fail(layout(), delivery, "j", "t", "E: x", None, NOW),
        _settle.release(layout(), delivery, "j", "t", "stop", NOW),
    ]
    for flow in flows:
        aws = FakeAws(update_item=[refused()])
        assert drive(flow, aws) is False
        assert aws.operations == ["update_item"]


def test_heartbeat_extends_the_record_then_the_message() -> None:
    aws = FakeAws()
    assert drive(_settle.heartbeat(layout(), _delivery(), "j", "t", NOW + 20.5, NOW), aws)
    assert aws.operations == ["update_item", "change_message_visibility"]
    assert aws.calls[1].params["VisibilityTimeout"] == 21


def test_a_retry_hides_the_message_until_it_is_due() -> None:
    aws = FakeAws()
    assert drive(_settle.fail(layout(), _delivery(), "j", "t", "E: x", NOW + 4.2, NOW), aws)
    assert aws.operations == ["update_item", "change_message_visibility_batch"]
    assert aws.calls[1].params["Entries"][0]["VisibilityTimeout"] == 5


def test_a_retry_near_the_redrive_limit_re_sends_a_fresh_message() -> None:
    aws = FakeAws(send_message_batch=[{"Successful": [{"Id": "0"}]}])
    delivery = _delivery(receive_count=4)
    assert drive(_settle.fail(layout(), delivery, "j", "t", "E: x", NOW + 4.2, NOW), aws)
    assert aws.operations == ["update_item", "send_message_batch", "delete_message_batch"]


def test_dead_is_an_update_a_dlq_copy_a_delete_and_the_copy_confirmed() -> None:
    aws = FakeAws(send_message_batch=[{"Successful": [{"Id": "0"}]}])
    assert drive(_settle.fail(layout(), _delivery(max_attempts=1), "j", "t", "E", NOW, NOW), aws)
    assert aws.operations == [
        "update_item",
        "send_message_batch",
        "delete_message_batch",
        "update_item",
    ]
    assert aws.calls[1].params["QueueUrl"] == DLQ
    marks = aws.calls[1].params["Entries"][0]["MessageAttributes"]
    key = aws.calls[0].params["ExpressionAttributeValues"][":revive_key"]["S"]
    assert marks == {
        "sqsjobs.copy": {"DataType": "String", "StringValue": "dead-letter"},
        "sqsjobs.revive": {"DataType": "String", "StringValue": key},  # the record's key
    }
    assert len(key) == 32 and key != "0" * 32


def test_a_dead_letter_copy_the_dlq_refused_is_left_owed_and_the_message_kept() -> None:
    refusal = failure("AccessDenied")
    aws = FakeAws(send_message_batch=[refusal])
    assert drive(_settle.fail(layout(), _delivery(max_attempts=1), "j", "t", "E", NOW, NOW), aws)
    assert aws.operations == ["update_item", "send_message_batch"]  # no delete, no confirm


def test_fail_for_a_claim_this_store_did_not_make_reads_the_attempts_once() -> None:
    job = prepared(max_attempts=1).job
    item = stored(job, status=JobStatus.RUNNING, attempts=1, lease_token="t")
    aws = FakeAws(get_item=[{"Item": item}])
    assert drive(_settle.fail(layout(), None, job.id, "t", "E: x", NOW + 5, NOW), aws)
    assert aws.operations == ["get_item", "update_item", "send_message", "update_item"]
    assert stored_from_item(item).job.attempts == 1


def test_release_makes_the_message_visible_at_once() -> None:
    aws = FakeAws()
    assert drive(_settle.release(layout(), _delivery(), "j", "t", "stop", NOW), aws)
    assert aws.operations == ["update_item", "change_message_visibility_batch"]
    assert aws.calls[1].params["Entries"][0]["VisibilityTimeout"] == 0


# -- drivers ------------------------------------------------------------------------------


async def test_both_drivers_make_the_same_calls() -> None:
    items = [(prepared(i).job, None) for i in range(3)]
    sync, concurrent = FakeAws(), FakeAws()
    drive(_flows.put_many(layout(), items, NOW), sync)
    await adrive(_flows.put_many(layout(), items, NOW), concurrent.asend)
    assert without_put_ids(sync.calls) == without_put_ids(concurrent.calls)
    assert [c.params.get("QueueUrl") for c in sync.calls] == [None, None, None, URL]


def without_put_ids(calls: list[Call]) -> list[Call]:
    """The calls with each put's random ``put_id`` left out."""
    plain = []
    for call in calls:
        if "Item" in call.params:
            item = {k: v for k, v in call.params["Item"].items() if k != "put_id"}
            call = Call(call.service, call.operation, {**call.params, "Item": item})
        plain.append(call)
    return plain


def store_error_of(error: BaseException) -> JobStoreError:
    """The ``JobStoreError`` a batch error was raised from: what callers see of AWS."""
    cause = error.__cause__
    assert isinstance(cause, JobStoreError), cause
    return cause


def shard_of(job_id: str) -> int:
    return shard(job_id, DEFAULT_SHARDS)
