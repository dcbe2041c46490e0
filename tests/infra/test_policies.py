"""Each role's managed policy is exactly what that role's code sends, nothing more.

Per role, a stack is deployed into the emulator and the role's operations run against
it, the way its code runs in production (the library for producers, workers, the Lambda
handlers and readers; the command line for operators). The requests they send, as IAM
actions on resource ARNs, must equal what the deployed policy grants, pair for pair: a
grant nobody uses is a failure just like a call the policy would refuse. Batch calls
count as their single-message action (``SendMessageBatch`` is ``sqs:SendMessage``).

The emulator does not enforce IAM, so these tests compare; cfn-lint and
``test_templates`` check the policies' form.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import boto3  # type: ignore[import-untyped]
import pytest
from click.testing import CliRunner, Result

from sqsjobs import Cron, EnqueueRequest, JobQueue, JobStatus, JobWorker, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_cron_handler, make_lambda_handler, make_reconcile_handler
from sqsjobs.aws.transports.aio import AioTransport
from sqsjobs.aws.transports.boto import BotoTransport
from sqsjobs.aws.wire.index_keys import DEFAULT_SHARDS
from sqsjobs.aws.wire.items import item_from_job
from sqsjobs.aws.wire.protocol import Call, Reply
from sqsjobs.cli import main
from sqsjobs.infra import deploy_stack
from tests.lambda_.conftest import Context, receive_event

from .calls import Deployed, Grant, Recorder, Usage, iam_action
from .iam import allowed
from .role_jobs import (
    LEASE,
    Ledger,
    aged_clock,
    aged_store,
    attachment,
    eventually,
    minute_turning,
    worker_jobs,
    write_without_message,
)
from .support import load_template

pytestmark = pytest.mark.filterwarnings("ignore:Tried to parse AWS.+CloudWatch.+Alarm:UserWarning")

ROLES = ("Producer", "Worker", "Reader", "Operator")
ITEM_WRITES = {"dynamodb:PutItem", "dynamodb:UpdateItem"}  # the only ones any role has


@pytest.fixture
def stack(aws_endpoint: str, stack_name: str) -> Deployed:
    outputs = deploy_stack(stack_name, endpoint_url=aws_endpoint)
    cloudformation = boto3.client("cloudformation", endpoint_url=aws_endpoint)
    (described,) = cloudformation.describe_stacks(StackName=stack_name)["Stacks"]
    return Deployed(stack_name, outputs, described["StackId"], aws_endpoint)


@pytest.fixture
def recorder(stack: Deployed, monkeypatch: pytest.MonkeyPatch) -> Recorder:
    recorder = Recorder(stack)
    boto_send, aio_send = BotoTransport.__call__, AioTransport.__call__

    def boto(self: BotoTransport, call: Call) -> Reply:
        recorder.note(call)
        return boto_send(self, call)

    async def aio(self: AioTransport, call: Call) -> Reply:
        recorder.note(call)
        return await aio_send(self, call)

    monkeypatch.setattr(BotoTransport, "__call__", boto)
    monkeypatch.setattr(AioTransport, "__call__", aio)
    return recorder


def assert_policy_is_what_was_sent(stack: Deployed, role: str, usage: Usage) -> None:
    # The emulator served exactly what the transports sent: nothing went around them.
    served = set(usage.served.requests)
    assert served == {(s.service, s.action) for s in usage.sent}
    granted = stack.granted(role)
    assert {(g.action, g.resource) for g in granted} == usage.grants()
    # Each request, with its condition keys, is one the policy allows (as IAM evaluates
    # it, ``iam.py``), and each condition admits no more than the requests sent.
    statements = stack.statements(role)
    assert [s for s in usage.sent if not allowed(statements, stack.request(s))] == []
    for grant in granted:
        if grant.condition is not None:
            assert normalized(grant.condition) == condition_for(stack, usage, grant)


def normalized(node: Any) -> Any:
    """A condition block with its value lists sorted: their order means nothing to IAM."""
    if isinstance(node, dict):
        return {key: normalized(value) for key, value in node.items()}
    return sorted(node) if isinstance(node, list) else node


def kind(key: str) -> str:
    """The pattern of a kind of item, from one key of it: ``limit#rate/x#0`` → ``limit#*``."""
    return key.split("#", 1)[0] + "#*"


def condition_for(stack: Deployed, usage: Usage, grant: Grant) -> dict[str, Any]:
    """The condition that admits exactly the ``grant``'s calls, as sent: the kinds of
    item they write and, where the policy limits these, the attributes they name and
    what they ask back."""
    calls = [s for s in usage.sent if s.grant == (grant.action, grant.resource)]
    assert grant.action in ITEM_WRITES and calls, grant
    contexts = [stack.request(sent).context for sent in calls]

    def union(key: str) -> list[str]:
        return sorted({value for context in contexts for value in context[key] or ()})

    leading = sorted({kind(key) for key in union("dynamodb:leadingkeys")})
    expected: dict[str, Any] = {
        "ForAllValues:StringLike": {"dynamodb:LeadingKeys": leading},
    }
    assert grant.condition is not None
    if "ForAllValues:StringEquals" in grant.condition:  # the producers' re-send
        attributes = union("dynamodb:attributes")
        (returned,) = union("dynamodb:returnvalues")
        expected |= {
            "ForAllValues:StringEquals": {"dynamodb:Attributes": attributes},
            "StringEquals": {"dynamodb:ReturnValues": returned},
        }
    return expected


# -- producers ----------------------------------------------------------------------------


async def test_producers_send_what_the_producer_policy_grants(
    stack: Deployed, recorder: Recorder
) -> None:
    with recorder.role() as usage:
        # resend_after=0: a duplicate always finds its record's message overdue.
        store = SqsJobStore.from_stack(stack.name, endpoint_url=stack.endpoint, resend_after=0.0)
        try:
            queue, blocking = JobQueue(store), SyncJobQueue(store)
            order = {"to": "zoë@example.com", "lines": ["café", "naïve"]}
            keyed = {"idempotency_key": "welcome-7f3a", "tenant": "acme"}
            first = await queue.enqueue("mail.send", order, **keyed)
            many = await queue.enqueue_many(
                [
                    EnqueueRequest("mail.send", {"n": n}, tenant=t)
                    for n, t in [(1, "acme"), (2, "globex"), (3, None)]
                ]
                + [EnqueueRequest("mail.send", {"n": 4}, idempotency_key="digest-2031-w07")]
                # An urgent job: a second copy goes to the priority lane.
                + [EnqueueRequest("mail.send", {"n": 5}, priority=7)]
            )
            # A long payload: written first to a body item of its own, read back from it.
            scanned = await queue.enqueue("mail.send", attachment(seed=7), tenant="acme")
            assert await queue.get(scanned.job.id) == scanned.job
            blocking.enqueue("report.build", {"month": "2031-02"}, delay=120.5, tenant="globex")
            blocking.enqueue_many([EnqueueRequest("report.build", {"week": w}) for w in (6, 7)])
            assert await queue.get(first.job.id) == first.job
            assert blocking.get(many[0].job.id) == many[0].job
            again = await queue.enqueue("mail.send", order, **keyed)
            # The Lambda cron function of Lambda-only deployments is a producer too.
            crons = make_cron_handler(store=store, crons=[Cron("* * * * *", "cache.warm")])
            ticks = await asyncio.to_thread(crons, {"source": "aws.events"}, None)
        finally:
            await store.aclose()
    assert (again.duplicate, again.job.id) == (True, first.job.id)
    assert ticks == {"enqueued": 5, "duplicates": 0}
    (resent,) = usage.calls("UpdateItem")  # the duplicate re-sent the overdue message
    assert resent.params["Key"] == {"pk": item_from_job(first.job, None, DEFAULT_SHARDS)["pk"]}
    assert_policy_is_what_was_sent(stack, "Producer", usage)


# -- workers ------------------------------------------------------------------------------


async def test_workers_and_the_lambda_handlers_send_what_the_worker_policy_grants(
    stack: Deployed, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup = SqsJobStore.from_stack(stack.name, endpoint_url=stack.endpoint)
    aged = aged_store(stack)
    try:
        producer = JobQueue(setup)
        await producer.enqueue_many(
            [
                EnqueueRequest("ok", {"via": "lambda"}, lease=LEASE),
                EnqueueRequest("flaky", {"via": "lambda"}, lease=LEASE),
                EnqueueRequest("doomed", {"via": "lambda"}, lease=LEASE, max_attempts=1),
            ]
        )
        sqs = boto3.client("sqs", endpoint_url=stack.endpoint)
        event = receive_event(sqs, stack.queue_url, 3)  # as Lambda's poller does
        await producer.enqueue_many(worker_jobs())
        # Enqueued long ago: its claim must extend its body.
        await JobQueue(aged, clock=aged_clock).enqueue("aged", attachment(seed=3), lease=LEASE)
        write_without_message(stack)
    finally:
        await setup.aclose()
        await aged.aclose()
    ledger = Ledger()
    with recorder.role() as usage:
        store = SqsJobStore.from_stack(stack.name, endpoint_url=stack.endpoint, wait_time=1.0)
        try:
            queue = JobQueue(store)
            worker = JobWorker(
                queue,
                ledger.registry(queue),
                concurrency=4,
                on_complete=ledger.on_complete,
                on_dead=ledger.on_dead,
                cron=[Cron("* * * * *", "tick")],
                clock=minute_turning(1.0),
            )
            worker.start()
            names = dict.fromkeys(["ok", "flaky", "long", "tick", "capped"], "completed")
            names |= dict.fromkeys(["fan_out", "archive", "aged"], "completed")
            names["doomed"] = "dead"
            await eventually(lambda: ledger.finished == names, "every job and a cron tick")
            await worker.stop()
            report = await store.reconcile(grace=0)  # the pass ``sqsjobs worker`` runs
        finally:
            await store.aclose()
        # Lambda functions read the environment, and find the DLQ by the redrive policy.
        for name, value in stack.env().items():
            monkeypatch.setenv(name, value)
        lambda_store = SqsJobStore.from_env()
        try:
            handler = make_lambda_handler(ledger.handlers(), store=lambda_store)
            batch = await asyncio.to_thread(handler, event, Context())
            reconcile = make_reconcile_handler(store=lambda_store, grace=0)
            await asyncio.to_thread(reconcile, {}, None)
        finally:
            lambda_store.close()
    assert report.resent >= 1 and report.dead == 0
    assert len(batch["batchItemFailures"]) == 1  # flaky: named, hidden for its backoff
    assert usage.calls("GetQueueUrl")
    assert_policy_is_what_was_sent(stack, "Worker", usage)


# -- readers ------------------------------------------------------------------------------


async def test_readers_send_what_the_reader_policy_grants(
    stack: Deployed, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup = SqsJobStore.from_stack(stack.name, endpoint_url=stack.endpoint)
    try:
        written = SyncJobQueue(setup).enqueue_many(
            [
                EnqueueRequest("invoice.send", {"invoice": n}, tenant=t)
                for n, t in [(8, "acme"), (9, "globex"), (10, None)]
            ]
        )
    finally:
        setup.close()
    with recorder.role() as usage:
        store = SqsJobStore.from_stack(stack.name, endpoint_url=stack.endpoint)
        try:
            reader = JobQueue(store)
            assert await reader.get(written[1].job.id) == written[1].job
            page = await reader.list(queue="default", status=JobStatus.QUEUED, tenant="acme")
            assert [job.id for job in page.jobs] == [written[0].job.id]
            (counted,) = await store.stats()
        finally:
            await store.aclose()
        for name, value in stack.env().items():
            monkeypatch.setenv(name, value)
        with SqsJobStore.from_env() as dashboard:  # no DLQ URLs: found through GetQueueUrl
            dashboard.sync.stats()
    assert counted.counts[JobStatus.QUEUED] == 3
    assert_policy_is_what_was_sent(stack, "Reader", usage)


# -- operators ----------------------------------------------------------------------------


def cli(stack: Deployed, *args: str, env: bool = False) -> Result:
    """``sqsjobs ARGS`` as an operator runs it: with ``--stack``, or from the environment."""
    if env:
        return CliRunner().invoke(main, list(args), env={**stack.env(), "SQSJOBS_STACK": None})
    where = ["--stack", stack.name, "--endpoint-url", stack.endpoint]
    return CliRunner().invoke(main, [*args, *where], env={"SQSJOBS_STACK": None})


async def operator_jobs(stack: Deployed) -> dict[str, str]:
    """The ids of two dead jobs (with their DLQ copies), a completed and a waiting one;
    and a job enqueued long ago and never claimed, whose body ``reconcile`` extends."""
    store = SqsJobStore.from_stack(stack.name, endpoint_url=stack.endpoint, wait_time=1.0)
    aged = aged_store(stack)
    ledger = Ledger()
    try:
        queue = JobQueue(store)
        made = await queue.enqueue_many(
            [EnqueueRequest("doomed", {"order": n}, lease=LEASE, max_attempts=1) for n in (1, 2)]
            + [EnqueueRequest("ok", {"order": 3}, lease=LEASE)]
        )
        worker = JobWorker(
            queue,
            ledger.handlers(),
            concurrency=3,
            on_complete=ledger.on_complete,
            on_dead=ledger.on_dead,
        )
        worker.start()
        wanted = {"doomed": "dead", "ok": "completed"}
        await eventually(lambda: ledger.finished == wanted, "the dead and completed jobs")
        await eventually(lambda: len(ledger.dead) == 2, "both dead jobs")
        await worker.stop()
        waiting = await queue.enqueue("ok", {"order": 4}, delay=3600.25)
        await JobQueue(aged, clock=aged_clock).enqueue("ok", attachment(seed=5))
    finally:
        await store.aclose()
        await aged.aclose()
    return {
        "dead": made[0].job.id,
        "redriven": made[1].job.id,
        "done": made[2].job.id,
        "waiting": waiting.job.id,
    }


async def test_operators_send_what_the_operator_policy_grants(
    stack: Deployed, recorder: Recorder
) -> None:
    ids = await operator_jobs(stack)
    with recorder.role() as usage:
        results = {
            "cancel": cli(stack, "jobs", "cancel", ids["waiting"]),
            "retry": cli(stack, "jobs", "retry", ids["dead"]),
            "dlq list": cli(stack, "dlq", "list"),
            "redrive": cli(stack, "dlq", "redrive"),
            "reconcile": cli(stack, "reconcile", "--grace", "0"),
            "stats": cli(stack, "stats"),
            "stats from the environment": cli(stack, "stats", env=True),
        }
        refused = cli(stack, "jobs", "cancel", ids["done"])  # explained with a GetItem
    assert {what: r.exit_code for what, r in results.items()} == dict.fromkeys(results, 0), {
        what: r.output for what, r in results.items()
    }
    assert (refused.exit_code, "already completed" in refused.output) == (1, True)
    assert results["redrive"].output.startswith("Redriven 1 job(s)"), results["redrive"].output
    assert_policy_is_what_was_sent(stack, "Operator", usage)


# -- the policies' form -------------------------------------------------------------------


@pytest.mark.parametrize("name", ["sqsjobs", "sqsjobs-queue"])
def test_no_policy_grants_a_wildcard_and_each_is_an_output(name: str) -> None:
    template = load_template(name)
    for role in ROLES:
        policy = template["Resources"][f"{role}Policy"]
        assert policy["Type"] == "AWS::IAM::ManagedPolicy"
        for statement in policy["Properties"]["PolicyDocument"]["Statement"]:
            assert statement["Effect"] == "Allow"
            assert not {"NotAction", "NotResource"} & set(statement)
            assert "*" not in json.dumps([statement["Action"], statement["Resource"]])
        assert template["Outputs"][f"{role}PolicyArn"]["Value"] == {"Ref": f"{role}Policy"}


def granted_actions(template: dict[str, Any], role: str) -> set[str]:
    document = template["Resources"][f"{role}Policy"]["Properties"]["PolicyDocument"]
    found: set[str] = set()
    for statement in document["Statement"]:
        listed = statement["Action"]
        found |= {listed} if isinstance(listed, str) else set(listed)
    return found


def test_producers_cannot_delete_query_scan_or_batch_write_and_workers_cannot_describe() -> None:
    template = load_template("sqsjobs")
    refused = {f"dynamodb:{a}" for a in ("BatchWriteItem", "DeleteItem", "Query", "Scan")}
    assert not refused & granted_actions(template, "Producer")
    assert "dynamodb:DescribeTable" not in granted_actions(template, "Worker")
    assert not {a for role in ROLES for a in granted_actions(template, role)} & {
        "dynamodb:DeleteItem",
        "dynamodb:Scan",
        "dynamodb:BatchWriteItem",
        "dynamodb:DescribeTable",
        "sqs:PurgeQueue",
        "sqs:DeleteQueue",
    }


def test_batch_calls_count_as_their_single_message_action() -> None:
    assert [iam_action("sqs", a) for a in ("SendMessageBatch", "DeleteMessageBatch")] == [
        "sqs:SendMessage",
        "sqs:DeleteMessage",
    ]
    assert iam_action("sqs", "ChangeMessageVisibilityBatch") == "sqs:ChangeMessageVisibility"
