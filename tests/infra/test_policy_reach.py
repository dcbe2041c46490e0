"""What each deployed policy lets its role write, item by item, evaluated as IAM would.

The emulator enforces no IAM, so the policies deployed in one stack are read back and
evaluated (``tests/infra/iam.py``) against requests built with the store's own request
builders: the ones each role's code sends must be allowed, and the ones a role's
credentials could otherwise send to reach other jobs' items must be refused. The table
holds these kinds of items, by partition key: ``job#{id}`` records, ``body#{id}#{nonce}``
payloads, ``limit#{key}#{slot}`` slots, and a batch's root ``batch#{id}`` and shards
``batch#{id}#{k}``. A ``TransactWriteItems`` is allowed if each of its entries on the
stack's table is, as its own item action.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import boto3  # type: ignore[import-untyped]
import pytest

from sqsjobs.aws.flows.bodies import _extend, put_body
from sqsjobs.aws.flows.resend import mark_resent
from sqsjobs.aws.wire import batches, control, dynamo, slots, transitions, waiting
from sqsjobs.aws.wire.index_keys import DEFAULT_SHARDS, IndexedTable
from sqsjobs.aws.wire.items import Stored, item_from_job, number, stored_from_item, text
from sqsjobs.aws.wire.protocol import Call
from sqsjobs.core import history
from sqsjobs.core.lifecycle import QUEUED
from sqsjobs.infra import deploy_stack

from .calls import Deployed
from .iam import allowed
from .support import sample_job

pytestmark = pytest.mark.filterwarnings("ignore:Tried to parse AWS.+CloudWatch.+Alarm:UserWarning")

NOW = time.time()
JOB_ID = uuid.uuid4().hex
OTHER_ID = uuid.uuid4().hex  # another job of the stack, say another tenant's
LIMIT = "concurrency/mail.send"  # a fleet-wide limit on one handler's runs
HOLDER = uuid.uuid4().hex  # a claim's lease token


@pytest.fixture(scope="module")
def stack(aws_endpoint: str) -> Iterator[Deployed]:
    name = f"t{uuid.uuid4().hex[:12]}"
    outputs = deploy_stack(name, endpoint_url=aws_endpoint)
    cloudformation = boto3.client("cloudformation", endpoint_url=aws_endpoint)
    (described,) = cloudformation.describe_stacks(StackName=name)["Stacks"]
    yield Deployed(name, outputs, described["StackId"], aws_endpoint)


def may(stack: Deployed, role: str, call: Call) -> bool:
    sent = stack.sends(call)  # a transaction's entries on the stack's table, or the call
    assert sent, call
    return all(allowed(stack.statements(role), stack.request(s)) for s in sent)


def stored(job_id: str, resent_at: float | None = None) -> Stored:
    """A waiting record as a re-sender reads it."""
    job = sample_job(job_id)
    return stored_from_item(item_from_job(job, None, DEFAULT_SHARDS))._replace(resent_at=resent_at)


def body(pk: str) -> dict[str, Any]:
    return {"pk": text(pk), "p": text('{"to": "zoë@example.com"}'), "expires_at": number(NOW + 9e5)}


def record(table: str, job_id: str) -> Call:
    return dynamo.put_new(table, item_from_job(sample_job(job_id), None, DEFAULT_SHARDS), NOW)


def update(table: str, pk: str, expression: str, condition: str, **extra: Any) -> Call:
    """A hand-written ``UpdateItem``: what credentials can send that the store never does."""
    names = {f"#{n}": n for n in ("status", "updated_at", "resent_at")}
    text_ = expression + condition
    params = {
        "TableName": table,
        "Key": {"pk": text(pk)},
        "UpdateExpression": expression,
        "ConditionExpression": condition,
        "ExpressionAttributeNames": {k: v for k, v in names.items() if k in text_},
        "ExpressionAttributeValues": {
            k: v for k, v in {":v": text("completed"), ":t": number(NOW)}.items() if k in text_
        },
        **extra,
    }
    return Call("dynamodb", "update_item", params)


def delete(table: str, pk: str) -> Call:
    return Call("dynamodb", "delete_item", {"TableName": table, "Key": {"pk": text(pk)}})


def in_transaction(*calls: Call) -> Call:
    """Single-item writes as the entries of one ``TransactWriteItems``."""
    kinds = {"put_item": "Put", "update_item": "Update", "delete_item": "Delete"}
    entries = [{kinds[call.operation]: dict(call.params)} for call in calls]
    return dynamo.transact_write(entries, uuid.uuid4().hex)


BATCH_ID = uuid.uuid4().hex


def batch_writes(table: str) -> list[Call]:
    """A batch's root and shard, as ``queue.batch`` writes them."""
    callbacks = {"on_complete": JOB_ID}
    return [
        batches.put_root(table, BATCH_ID, 30, 2, callbacks, None, NOW),
        batches.put_shard(table, BATCH_ID, 1, [OTHER_ID]),
    ]


def batch_ends(table: str) -> list[Call]:
    """What a batch job's end writes to its batch: its count (with the job's mark, in
    one transaction), its shard noted done on the root, and the batch closed."""
    return [
        batches.count(table, {"pk": text(f"job#{OTHER_ID}")}, BATCH_ID, 1, "completed"),
        batches.shard_done(table, BATCH_ID, 1),
        batches.close(table, BATCH_ID, NOW, NOW + 8.64e4),
    ]


def settle_children(indexed: IndexedTable) -> list[Call]:
    """What a parent's end writes to a waiting child: crossed off, released, or
    cancelled (with an entry in its history)."""
    noted = (history.action_entry(NOW, history.CANCEL, history.CANCELLED, "parent x"), 0)
    return [
        waiting.arrive(indexed.name, OTHER_ID, JOB_ID),
        waiting.release(indexed, OTHER_ID, QUEUED, NOW),
        waiting.cancel_child(indexed, (OTHER_ID, "default"), "parent died", NOW, NOW, noted),
    ]


# -- producers ----------------------------------------------------------------------------


def test_a_producer_may_write_records_and_bodies(stack: Deployed) -> None:
    table = stack.table
    assert may(stack, "Producer", record(table, JOB_ID))
    assert may(stack, "Producer", put_body(table, body(f"body#{JOB_ID}#{uuid.uuid4().hex[:16]}")))
    assert may(stack, "Producer", put_body(table, body(f"body#{JOB_ID}")))  # before nonces


def test_a_producer_may_mark_a_resend_and_nothing_else_of_a_record(stack: Deployed) -> None:
    table = stack.table
    assert may(stack, "Producer", mark_resent(table, stored(JOB_ID), NOW))
    assert may(stack, "Producer", mark_resent(table, stored(OTHER_ID, NOW - 61.5), NOW))
    # The attack the re-send's grant must not allow: settle (or cancel) another job.
    settle = update(table, f"job#{OTHER_ID}", "SET #status = :v", "#updated_at = :t")
    assert not may(stack, "Producer", settle)
    read_back = mark_resent(table, stored(OTHER_ID), NOW)
    read_back.params["ReturnValues"] = "ALL_NEW"  # a whole record back, through an update
    assert not may(stack, "Producer", read_back)


def test_a_producer_cannot_hold_a_limit_slot_or_write_other_items(stack: Deployed) -> None:
    table = stack.table
    take = slots.take(table, LIMIT, 0, HOLDER, NOW + 3.6e6, NOW)  # held for 1000 hours
    assert take.params["Item"]["pk"] == text(f"limit#{LIMIT}#0")
    assert not may(stack, "Producer", take)
    assert not may(stack, "Producer", put_body(table, body(f"tenant#{JOB_ID}")))
    assert not may(stack, "Producer", put_body(table, body(f"Job#{JOB_ID}")))
    resent = mark_resent(table, stored(JOB_ID), NOW)
    resent.params["Key"] = {"pk": text(f"limit#{LIMIT}#0")}
    assert not may(stack, "Producer", resent)
    assert not may(stack, "Producer", delete(table, f"job#{OTHER_ID}"))


def test_a_producer_cannot_claim_or_settle_jobs(stack: Deployed) -> None:
    indexed = IndexedTable(stack.table, DEFAULT_SHARDS)
    claim = dynamo.claim(indexed, OTHER_ID, "default", "worker-1", HOLDER, NOW, 2.0)
    assert not may(stack, "Producer", claim)
    assert not may(stack, "Producer", transitions.cancel(indexed, OTHER_ID, NOW, NOW + 8.64e4))
    # Nor settle a waiting child: cross a parent off it, release it or cancel it.
    assert [may(stack, "Producer", call) for call in settle_children(indexed)] == [False] * 3


def test_a_producer_may_write_batches_and_jobs_in_a_transaction(stack: Deployed) -> None:
    table = stack.table
    assert [may(stack, "Producer", call) for call in batch_writes(table)] == [True, True]
    jobs = in_transaction(record(table, JOB_ID), record(table, OTHER_ID))
    assert may(stack, "Producer", jobs)
    # The application's own entries are not the stack's to grant: its own statement
    # allows them (README), whatever the stack's policies say.
    order = Call("dynamodb", "put_item", {"TableName": "orders", "Item": body("order#A-1")})
    assert [s.action for s in stack.sends(in_transaction(order, record(table, JOB_ID)))] == [
        "PutItem"
    ]


def test_a_producer_cannot_count_end_or_close_a_batch(stack: Deployed) -> None:
    assert [may(stack, "Producer", call) for call in batch_ends(stack.table)] == [False] * 3
    # A transaction is no way around a grant: its entries are refused as they would be
    # alone, so a record's entry does not carry a limit slot's.
    take = slots.take(stack.table, LIMIT, 0, HOLDER, NOW + 3.6e6, NOW)
    assert not may(stack, "Producer", in_transaction(record(stack.table, JOB_ID), take))


def test_a_producer_may_link_a_child_to_a_parent_and_so_name_a_status(stack: Deployed) -> None:
    """A child's link adds its id to a parent's ``children`` on condition that the parent
    has not ended, so the grant names ``status`` (IAM cannot tell a condition's read of
    an attribute from a write): a raw ``UpdateItem`` may set a record's status through
    it. Nothing else of the record: not ``updated_at`` with it, nor its index keys, its
    lease or its expiry, and it returns nothing."""
    table = stack.table
    assert may(stack, "Producer", waiting.link(table, OTHER_ID, JOB_ID))
    status = update(table, f"job#{OTHER_ID}", "SET #status = :v", "attribute_exists(#status)")
    assert may(stack, "Producer", status)
    for attribute in ("updated_at", "list_pk", "lease_until", "expires_at", "awaiting"):
        also = update(table, f"job#{OTHER_ID}", f"SET #status = :v, {attribute} = :t", "")
        del also.params["ConditionExpression"]
        assert not may(stack, "Producer", also), attribute
    read_back = waiting.link(table, OTHER_ID, JOB_ID)
    read_back.params["ReturnValues"] = "ALL_NEW"  # a whole record back, through an update
    assert not may(stack, "Producer", read_back)
    elsewhere = waiting.link(table, OTHER_ID, JOB_ID)
    elsewhere.params["Key"] = {"pk": text(f"batch#{BATCH_ID}")}
    assert not may(stack, "Producer", elsewhere)


# -- workers and operators ----------------------------------------------------------------


def test_workers_may_write_records_bodies_and_limit_slots(stack: Deployed) -> None:
    table, indexed = stack.table, IndexedTable(stack.table, DEFAULT_SHARDS)
    body_key = {"pk": text(f"body#{JOB_ID}#{uuid.uuid4().hex[:16]}")}
    writes = [
        record(table, JOB_ID),  # a cron tick, a handler's follow-up job
        put_body(table, body(f"body#{JOB_ID}#{uuid.uuid4().hex[:16]}")),
        dynamo.claim(indexed, JOB_ID, "default", "worker-1", HOLDER, NOW, 2.0),
        _extend(table, body_key, "expires_at", NOW + 2.6e6),  # a long-lived job's body
        slots.take(table, LIMIT, 3, HOLDER, NOW + 30.0, NOW),
        slots.extend(table, LIMIT, 3, HOLDER, NOW + 60.0),
        slots.free(table, LIMIT, 3, HOLDER),
        mark_resent(table, stored(JOB_ID), NOW),  # the reconciler's pass
        waiting.link(table, OTHER_ID, JOB_ID),  # a handler's job that waits for others
        *settle_children(indexed),  # a parent's end, or the reconciler's
        *batch_writes(table),  # a handler's batch
        *batch_ends(table),  # a batch job's end, or the reconciler's repair
    ]
    assert [may(stack, "Worker", call) for call in writes] == [True] * len(writes)


def test_workers_write_nothing_else_in_the_table(stack: Deployed) -> None:
    table = stack.table
    assert not may(stack, "Worker", put_body(table, body(f"tenant#{JOB_ID}")))
    assert not may(
        stack, "Worker", update(table, f"config#{JOB_ID}", "SET #status = :v", "#status = :v")
    )
    assert not may(stack, "Worker", delete(table, f"limit#{LIMIT}#3"))


def test_operators_may_change_records_and_bodies_but_not_limit_slots(stack: Deployed) -> None:
    table, indexed = stack.table, IndexedTable(stack.table, DEFAULT_SHARDS)
    body_key = {"pk": text(f"body#{JOB_ID}#{uuid.uuid4().hex[:16]}")}
    assert may(stack, "Operator", transitions.cancel(indexed, JOB_ID, NOW, NOW + 8.64e4))
    assert may(stack, "Operator", _extend(table, body_key, "expires_at", NOW + 2.6e6))
    assert not may(stack, "Operator", slots.free(table, LIMIT, 0, HOLDER))
    assert not may(stack, "Operator", slots.take(table, LIMIT, 0, HOLDER, NOW + 30.0, NOW))


def test_operators_settle_what_waits_for_a_job_they_cancel_but_write_no_batch(
    stack: Deployed,
) -> None:
    """A cancel settles the job's children and counts its end in its batch (which it may
    end); only producers and workers write a batch's items whole."""
    indexed = IndexedTable(stack.table, DEFAULT_SHARDS)
    settles = [*settle_children(indexed), *batch_ends(stack.table)]
    assert [may(stack, "Operator", call) for call in settles] == [True] * len(settles)
    assert [may(stack, "Operator", call) for call in batch_writes(stack.table)] == [False] * 2


def test_readers_write_nothing(stack: Deployed) -> None:
    table, indexed = stack.table, IndexedTable(stack.table, DEFAULT_SHARDS)
    assert not may(stack, "Reader", record(table, JOB_ID))
    assert not may(stack, "Reader", mark_resent(table, stored(JOB_ID), NOW))
    assert not may(stack, "Reader", in_transaction(record(table, JOB_ID)))
    writes = [*batch_writes(table), *batch_ends(table), *settle_children(indexed)]
    assert [may(stack, "Reader", call) for call in writes] == [False] * len(writes)


def test_only_operators_may_pause_or_resume_a_queue(stack: Deployed) -> None:
    """The control item (``wire.control``) holds the fleet's pauses: an operator's to
    write; every role may read it (a worker reads it before its claims)."""
    writes = [control.pause(stack.table, "default", NOW), control.resume(stack.table, "default")]
    for role in ("Producer", "Worker", "Reader"):
        assert [may(stack, role, call) for call in writes] == [False, False], role
    assert [may(stack, "Operator", call) for call in writes] == [True, True]
    for role in ("Producer", "Worker", "Reader", "Operator"):
        assert may(stack, role, control.read(stack.table)), role
