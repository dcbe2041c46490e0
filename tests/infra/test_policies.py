"""Each role's managed policy is exactly what that role's code sends, nothing more.

Per role, a stack is deployed into the emulator and the role's operations run against
it, the way its code runs in production (the library for producers, workers, the Lambda
handlers and readers; the command line for operators). The requests they send, as IAM
actions on resource ARNs, must equal what the deployed policy grants, pair for pair: a
grant nobody uses is a failure just like a call the policy would refuse. Batch calls
count as their single-message action (``SendMessageBatch`` is ``sqs:SendMessage``), and
each entry of a ``TransactWriteItems`` as its own item action (``calls.py``).

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

from sqsjobs import BatchStatus, Cron, EnqueueRequest, JobQueue, JobStatus, JobWorker, SyncJobQueue
from sqsjobs.aws import SqsJobStore
from sqsjobs.aws.lambda_ import make_cron_handler, make_lambda_handler, make_reconcile_handler
from sqsjobs.aws.transports.aio import AioTransport
from sqsjobs.aws.transports.boto import BotoTransport
from sqsjobs.aws.wire import debounce as debounce_slots
from sqsjobs.aws.wire.index_keys import DEFAULT_SHARDS
from sqsjobs.aws.wire.items import item_from_job
from sqsjobs.aws.wire.protocol import Call, Reply
from sqsjobs.cli import main
from sqsjobs.infra import deploy_stack
from tests.lambda_.conftest import Context, receive_event

from .calls import Deployed, Grant, Recorder, Sent, Usage, iam_action
from .iam import allowed, attributes, condition_holds
from .role_jobs import (
    COMPOSED,
    LEASE,
    Ledger,
    aged_clock,
    aged_store,
    attachment,
    composed_jobs,
    eventually,
    minute_turning,
    strand,
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
    assert served == {s.served for s in usage.sent}
    granted = stack.granted(role)
    assert {(g.action, g.resource) for g in granted} == usage.grants()
    # Each request, with its condition keys, is one the policy allows (as IAM evaluates
    # it, ``iam.py``), and each condition admits no more than the requests sent.
    statements = stack.statements(role)
    assert [s for s in usage.sent if not allowed(statements, stack.request(s))] == []
    conditioned = [grant for grant in granted if grant.condition is not None]
    # Where an action has several conditioned statements, each request is one's alone:
    # none of them is redundant, and each is fitted to its own requests.
    assert [s for s in usage.sent if len(admitting(stack, conditioned, s)) > 1] == []
    for grant in conditioned:
        assert normalized(grant.condition) == condition_for(stack, usage, grant)


def admitting(stack: Deployed, grants: list[Grant], sent: Sent) -> list[Grant]:
    """The ``grants`` of ``sent``'s action and resource whose condition admits it."""
    context = stack.request(sent).context
    return [
        grant
        for grant in grants
        if (grant.action, grant.resource) == sent.grant
        and condition_holds(grant.condition or {}, context)
    ]


def normalized(node: Any) -> Any:
    """A condition block with its value lists sorted: their order means nothing to IAM."""
    if isinstance(node, dict):
        return {key: normalized(value) for key, value in node.items()}
    return sorted(node) if isinstance(node, list) else node


def kind(key: str) -> str:
    """The pattern of a kind of item, from one key of it: ``limit#rate/x#0`` → ``limit#*``."""
    return key.split("#", 1)[0] + "#*"


def condition_for(stack: Deployed, usage: Usage, grant: Grant) -> dict[str, Any]:
    """The condition that admits exactly the ``grant``'s calls, as sent (those of its
    action and resource that it admits): the kinds of item they write and, where the
    policy limits these, the attributes they name and what they ask back."""
    calls = [s for s in usage.sent if admitting(stack, [grant], s)]
    assert grant.action in ITEM_WRITES and calls, grant
    contexts = [stack.request(sent).context for sent in calls]

    def union(key: str) -> list[str]:
        return sorted({value for context in contexts for value in context.get(key) or ()})

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


def orders_table(stack: Deployed) -> str:
    """The application's own table, beside the stack's: its writes join the jobs' in one
    transaction, under a statement of the application's (README), not the stack's."""
    name = f"{stack.name}-orders"
    dynamodb = boto3.client("dynamodb", endpoint_url=stack.endpoint)
    dynamodb.create_table(
        TableName=name,
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return name


async def test_producers_send_what_the_producer_policy_grants(
    stack: Deployed, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    orders = orders_table(stack)
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
            # Jobs that wait for others: each reads its parents and links itself onto
            # every one (a chain, whose second link is onto a waiting job, and fan-ins).
            extract = await queue.enqueue("etl.extract", {"table": "orders"})
            transform = await queue.enqueue("etl.transform", after=[extract.job.id])
            load = blocking.enqueue("etl.load", after=[transform.job.id])
            fan_in = [many[0].job.id, many[2].job.id, scanned.job.id]
            merged = await queue.enqueue("etl.merge", after=fan_in)
            merged_too = blocking.enqueue_many(
                [EnqueueRequest("etl.audit", after=[load.job.id, merged.job.id])]
            )
            # A batch of 30 (two shards), its callbacks waiting for it; and its figures.
            batch = await queue.batch(
                [EnqueueRequest("invoice.render", {"invoice": n}) for n in range(30)],
                on_complete=EnqueueRequest("invoice.summary", attachment(seed=9)),
                on_success=EnqueueRequest("invoice.mail_all"),
            )
            status = await queue.batch_status(batch.id)
            small = blocking.batch([EnqueueRequest("invoice.render", {"invoice": 31})])
            # The application's own write and two jobs (one with a body) in one
            # transaction; then a transaction of jobs alone.
            new_order = {
                "TableName": orders,
                "Item": {"pk": {"S": "order#A-1001"}, "total_cents": {"N": "1999"}},
                "ConditionExpression": "attribute_not_exists(pk)",
            }
            confirm = EnqueueRequest("order.confirm", {"order": "A-1001"}, idempotency_key="A-1001")
            archive = EnqueueRequest("order.archive", attachment(seed=11), tenant="acme")
            committed = await queue.enqueue_in_transaction([confirm, archive], [{"Put": new_order}])
            audited = blocking.enqueue_in_transaction([EnqueueRequest("order.audit")], [])
            # A debounced burst: one write of its slot per enqueue (the first also the
            # record); once that burst has gone by, the next enqueue renews the slot.
            monkeypatch.setattr(debounce_slots, "STRANDED", 0.0)
            debounced = [
                await queue.enqueue("search.reindex", {"rev": r}, debounce_key="cat", debounce=0.1)
                for r in (1, 2)
            ]
            await asyncio.sleep(0.3)
            renewed = blocking.enqueue(
                "search.reindex", {"rev": 3}, debounce_key="cat", debounce=60
            )
        finally:
            await store.aclose()
    assert (again.duplicate, again.job.id) == (True, first.job.id)
    assert ticks == {"enqueued": 5, "duplicates": 0}
    waiting = [transform, load, merged, *merged_too]
    assert {result.job.status for result in waiting} == {JobStatus.WAITING}
    assert status is not None and (status.total, status.open) == (30, 30)
    assert (len(small.job_ids), small.callback_ids) == (1, ())
    assert [r.duplicate for r in committed + audited] == [False] * 3
    assert [r.duplicate for r in [*debounced, renewed]] == [False, True, False]
    updates = usage.calls("UpdateItem")
    # The duplicate re-sent the overdue message; every other update is a child's link.
    (resent,) = [u for u in updates if "resent_at" in attributes("UpdateItem", u.params)]
    assert resent.params["Key"] == {"pk": item_from_job(first.job, None, DEFAULT_SHARDS)["pk"]}
    linked = [extract.job.id, transform.job.id, *fan_in, load.job.id, merged.job.id]
    links = [u for u in updates if u is not resent and key(u).startswith("job#")]
    assert sorted(key(u) for u in links) == sorted(f"job#{i}" for i in linked)
    # Each transaction's job entries are PutItems of records; the order's is not the
    # stack's to grant.
    entries = [s for s in usage.sent if s.enclosing == "TransactWriteItems"]
    assert sorted(key(s) for s in entries) == sorted(f"job#{r.job.id}" for r in committed + audited)
    assert {s.action for s in entries} == {"PutItem"}
    kept = boto3.client("dynamodb", endpoint_url=stack.endpoint).get_item(
        TableName=orders, Key={"pk": {"S": "order#A-1001"}}
    )
    assert "Item" in kept
    assert_policy_is_what_was_sent(stack, "Producer", usage)


def key(sent: Sent) -> str:
    """The partition key of the item a request names."""
    named = sent.params.get("Key") or sent.params["Item"]
    return str(named["pk"]["S"])


async def look_up(
    stack: Deployed, job_ids: list[str], batch_id: str
) -> tuple[list[JobStatus | None], BatchStatus | None]:
    """How jobs and a batch stand, read once a role's window has closed (so these reads
    are not the role's)."""
    store = SqsJobStore.from_stack(stack.name, endpoint_url=stack.endpoint)
    try:
        queue = JobQueue(store)
        jobs = [await queue.get(job_id) for job_id in job_ids]
        return [job.status if job else None for job in jobs], await queue.batch_status(batch_id)
    finally:
        await store.aclose()


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
        cancelled = await composed_jobs(producer)
        stranded, open_batch = await strand(stack, producer)
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
            names |= COMPOSED  # children released, batches counted, callbacks run
            names["doomed"] = "dead"
            await eventually(lambda: ledger.finished == names, "every job and a cron tick")
            await worker.stop()
            # The pass ``sqsjobs worker`` runs: it also releases the stranded child and
            # counts the open batch's job, releasing its callback.
            report = await store.reconcile(grace=0)
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
    assert report.resent >= 1 and report.dead == 0 and report.settled >= 2
    settled = [*cancelled.values(), stranded, *open_batch.callback_ids]
    statuses, counted = await look_up(stack, settled, open_batch.id)
    # Cancelled for their parent's death; released by the reconciler.
    assert statuses == [JobStatus.CANCELLED] * len(cancelled) + [JobStatus.QUEUED] * 2
    assert counted is not None and (counted.completed, counted.open) == (1, 0)
    assert len(batch["batchItemFailures"]) == 1  # flaky: named, hidden for its backoff
    assert usage.calls("GetQueueUrl")
    assert_policy_is_what_was_sent(stack, "Worker", usage)


# -- readers ------------------------------------------------------------------------------


async def test_readers_send_what_the_reader_policy_grants(
    stack: Deployed, recorder: Recorder, monkeypatch: pytest.MonkeyPatch
) -> None:
    setup = SqsJobStore.from_stack(stack.name, endpoint_url=stack.endpoint)
    try:
        producer = SyncJobQueue(setup)
        written = producer.enqueue_many(
            [
                EnqueueRequest("invoice.send", {"invoice": n}, tenant=t)
                for n, t in [(8, "acme"), (9, "globex"), (10, None)]
            ]
        )
        child = producer.enqueue("invoice.archive", after=[written[2].job.id]).job
        batch = producer.batch(
            [EnqueueRequest("invoice.render", {"invoice": n}) for n in (11, 12)],
            on_complete=EnqueueRequest("invoice.summary"),
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
            waiting = await reader.list(status=JobStatus.WAITING)
            status = await reader.batch_status(batch.id)  # a dashboard's batch page
            (counted,) = await store.stats()
        finally:
            await store.aclose()
        for name, value in stack.env().items():
            monkeypatch.setenv(name, value)
        with SqsJobStore.from_env() as dashboard:  # no DLQ URLs: found through GetQueueUrl
            dashboard.sync.stats()
            assert SyncJobQueue(dashboard).batch_status(batch.id) == status
        shown = [cli(stack, "jobs", "show", job_id) for job_id in (child.id, *batch.job_ids)]
    assert counted.counts[JobStatus.QUEUED] == 5 and counted.counts[JobStatus.WAITING] == 2
    assert sorted(job.id for job in waiting.jobs) == sorted([child.id, *batch.callback_ids])
    assert status is not None and (status.total, status.open) == (2, 2)
    assert [r.exit_code for r in shown] == [0, 0, 0]
    assert written[2].job.id in shown[0].output  # the parent it waits for
    assert [batch.id in r.output for r in shown[1:]] == [True, True]
    assert_policy_is_what_was_sent(stack, "Reader", usage)


# -- operators ----------------------------------------------------------------------------


def cli(stack: Deployed, *args: str, env: bool = False) -> Result:
    """``sqsjobs ARGS`` as an operator runs it: with ``--stack``, or from the environment."""
    if env:
        return CliRunner().invoke(main, list(args), env={**stack.env(), "SQSJOBS_STACK": None})
    where = ["--stack", stack.name, "--endpoint-url", stack.endpoint]
    return CliRunner().invoke(main, [*args, *where], env={"SQSJOBS_STACK": None})


async def operator_jobs(stack: Deployed) -> dict[str, str]:
    """The ids of two dead jobs (with their DLQ copies), a completed and a delayed one;
    a job waiting for a delayed one, with a child of its own; a batch's only job, with
    both callbacks; and a job enqueued long ago and never claimed, whose body
    ``reconcile`` extends."""
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
        parent = await queue.enqueue("ok", {"order": 5}, delay=3600.25)
        child = await queue.enqueue("ok", {"order": 6}, after=[parent.job.id])
        grandchild = await queue.enqueue("ok", {"order": 7}, after=[child.job.id])
        batch = await queue.batch(
            [EnqueueRequest("ok", {"order": 8}, delay=3600.25)],
            on_complete=EnqueueRequest("ok", {"order": 9}),
            on_success=EnqueueRequest("ok", {"order": 10}),
        )
        debounced = await queue.enqueue("ok", {"order": 11}, debounce_key="op", debounce=3600)
    finally:
        await store.aclose()
        await aged.aclose()
    return {
        "dead": made[0].job.id,
        "redriven": made[1].job.id,
        "done": made[2].job.id,
        "waiting": waiting.job.id,  # delayed: it waits for its time
        "child": child.job.id,  # waiting for a parent
        "grandchild": grandchild.job.id,
        "batch": batch.id,
        "batch job": batch.job_ids[0],
        "on_complete": batch.callback_ids[0],
        "on_success": batch.callback_ids[1],
        "debounced": debounced.job.id,  # its burst's slot ends with its cancel
    }


# What the operator's cancels leave: the waiting job's child cancelled with it; the
# batch ended by its only job's cancel, so on_complete released and on_success cancelled.
CANCEL_ENDS = {
    "child": JobStatus.CANCELLED,
    "grandchild": JobStatus.CANCELLED,
    "batch job": JobStatus.CANCELLED,
    "on_complete": JobStatus.QUEUED,
    "on_success": JobStatus.CANCELLED,
}


async def test_operators_send_what_the_operator_policy_grants(
    stack: Deployed, recorder: Recorder
) -> None:
    ids = await operator_jobs(stack)
    with recorder.role() as usage:
        results = {
            "cancel": cli(stack, "jobs", "cancel", ids["waiting"]),
            # Its child is cancelled with it; a batch's last job ends its batch.
            "cancel a waiting job": cli(stack, "jobs", "cancel", ids["child"]),
            "cancel a batch's job": cli(stack, "jobs", "cancel", ids["batch job"]),
            "cancel a debounced job": cli(stack, "jobs", "cancel", ids["debounced"]),
            "show a batch's job": cli(stack, "jobs", "show", ids["batch job"]),
            "retry": cli(stack, "jobs", "retry", ids["dead"]),
            "dlq list": cli(stack, "dlq", "list"),
            "redrive": cli(stack, "dlq", "redrive"),
            "reconcile": cli(stack, "reconcile", "--grace", "0"),
            "stats": cli(stack, "stats"),
            "stats from the environment": cli(stack, "stats", env=True),
            # The fleet's pause: one UpdateItem of the control item each, and a read.
            "pause": cli(stack, "queues", "pause", "default"),
            "queues list": cli(stack, "queues", "list"),
            "resume": cli(stack, "queues", "resume", "default"),
        }
        refused = cli(stack, "jobs", "cancel", ids["done"])  # explained with a GetItem
    assert {what: r.exit_code for what, r in results.items()} == dict.fromkeys(results, 0), {
        what: r.output for what, r in results.items()
    }
    assert (refused.exit_code, "already completed" in refused.output) == (1, True)
    assert results["redrive"].output.startswith("Redriven 1 job(s)"), results["redrive"].output
    statuses, status = await look_up(stack, [ids[what] for what in CANCEL_ENDS], ids["batch"])
    assert dict(zip(CANCEL_ENDS, statuses, strict=True)) == CANCEL_ENDS
    assert status is not None and (status.cancelled, status.open) == (1, 0)
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
