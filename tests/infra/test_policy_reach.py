"""What each deployed policy lets its role write, item by item, evaluated as IAM would.

The emulator enforces no IAM, so the policies deployed in one stack are read back and
evaluated (``tests/infra/iam.py``) against requests built with the store's own request
builders: the ones each role's code sends must be allowed, and the ones a role's
credentials could otherwise send to reach other jobs' items must be refused. The table
holds three kinds of items, by partition key: ``job#{id}`` records, ``body#{id}#{nonce}``
payloads and ``limit#{key}#{slot}`` slots.
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
from sqsjobs.aws.wire import dynamo, slots, transitions
from sqsjobs.aws.wire.index_keys import DEFAULT_SHARDS, IndexedTable
from sqsjobs.aws.wire.items import Stored, item_from_job, number, stored_from_item, text
from sqsjobs.aws.wire.protocol import Call
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
    return allowed(stack.statements(role), stack.request(stack.sent(call)))


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


def test_readers_write_nothing(stack: Deployed) -> None:
    table = stack.table
    assert not may(stack, "Reader", record(table, JOB_ID))
    assert not may(stack, "Reader", mark_resent(table, stored(JOB_ID), NOW))
